/** @database `npm run users:add|list|remove` against the suite's database; a removed person's sessions end at once */
import { peopleCommand } from '../src/people/people.cli.js';
import { signedInAs } from './support/inbox-session.js';
import { startTestApp, TestApp } from './support/test-app.js';

describe('users:add, users:list, users:remove', () => {
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    env = t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : { DATA_DIR: t.config.dataDir };
  });
  afterAll(() => t.close());

  async function users(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const status = await peopleCommand(argv, env, { out: (line) => out.push(line), err: (line) => err.push(line) });
    return { status, out: out.map((line) => JSON.parse(line) as Record<string, string>), err: err.join('\n') };
  }

  it('adds the first admin, lists them, refuses the address twice, and removes them by address', async () => {
    const added = await users('add', '--email', ' Ana@Empresa.com.BR ', '--role', 'admin');
    expect(added).toEqual({
      status: 0,
      out: [{ id: expect.stringMatching(/^[0-9a-f-]{36}$/), email: 'Ana@empresa.com.br', role: 'admin', created_at: expect.any(String) }],
      err: 'Added Ana@empresa.com.br as admin: they sign in at /inbox with a code sent to that address.',
    });
    expect((await users('list')).out).toEqual(added.out);
    const again = await users('add', '--email', 'ana@empresa.com.br', '--role', 'viewer');
    expect([again.status, again.err]).toEqual([1, 'ana@empresa.com.br is a person of the inbox already (npm run users:list).']);
    const last = await users('remove', 'ANA@empresa.com.br');
    expect([last.status, last.err]).toEqual([1, 'ANA@empresa.com.br is the last admin: make another person admin first.']);
    const bia = await users('add', '--email', 'bia@empresa.com.br', '--role', 'admin');
    const removed = await users('remove', 'ANA@empresa.com.br');
    expect(removed.status).toBe(0);
    expect((await users('list')).out).toEqual(bia.out);
  });

  it('removes only one of the last two admins when both are removed at the same instant', async () => {
    await users('add', '--email', 'caio@empresa.com.br', '--role', 'admin');
    const admins = async () => (await users('list')).out.filter((person) => person.role === 'admin');
    expect(await admins()).toHaveLength(2);
    const results = await Promise.all((await admins()).map((person) => users('remove', person.id)));
    expect(results.map((result) => result.status).sort()).toEqual([0, 1]);
    expect(results.find((result) => result.status === 1)!.err).toMatch(/ is the last admin: make another person admin first\.$/);
    expect(await admins()).toHaveLength(1);
  });

  it('refuses usage errors with exit code 2 before opening the database', async () => {
    for (const argv of [
      ['add', '--email', 'not-an-address', '--role', 'admin'],
      ['add', '--email', 'a@b.com.br', '--role', 'owner'],
      ['add'],
      ['frobnicate'],
      ['remove'],
    ]) {
      const result = await users(...argv);
      expect(result.status).toBe(2);
      expect(result.err).toContain('npm run users:add -- --email <address> --role <viewer|marketer|admin>');
    }
    expect((await users('remove', 'nobody@empresa.com.br')).status).toBe(1);
  });

  it('ends every session of a removed person at once', async () => {
    const bia = await signedInAs(t, 'marketer');
    expect((await bia.get('/inbox')).headers.location).toBe('/inbox/leads');
    expect((await users('remove', bia.userId)).status).toBe(0);
    expect((await bia.get('/inbox')).headers.location).toBe('/inbox/sign-in');
  });
});
