/** @system kill -9 of the built service in the middle of an erasure */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freshDatabase, TestDatabase } from './support/database.js';
import { freePort, GENEROUS_LIMITS, ServerProcess, startServer } from './support/server-process.js';

/**
 * An erasure records each batch in the batch's own transaction (docs/decisions/0029-data-subject-requests.md): the
 * service is killed (SIGKILL) while an erasure of thousands of leads is under way, and every lead gone from the file
 * must be in an audit row; the erasure asked again erases the rest, and the audit then holds every lead once.
 */

const LEADS = 3_000;
const EMAIL = 'apagada.crash@example.com';

describe('erasure killed mid-way', () => {
  let database: TestDatabase;
  let server: ServerProcess | undefined;
  let port: number;
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  const env = () => ({ ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'warn', WEBHOOK_WORKER: 'false' });

  async function token(): Promise<string> {
    const output = execFileSync(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', 'privacidade', '--scope', 'leads:erase'], {
      env: { PATH: process.env.PATH, ...env(), PUBLIC_BASE_URL: server!.baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const client = JSON.parse(output.toString().trim().split('\n').pop()!) as { client_id: string; client_secret: string };
    const res = await fetch(`${server!.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...client }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  }

  const erase = (bearer: string) =>
    fetch(`${server!.baseUrl}/api/v1/data-subject-requests/erasure`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ email: EMAIL }),
    });

  /** The lead ids the audit rows name, with each row's type. */
  const audited = async () =>
    (await database.query<{ type: string; lead_ids: string }>('SELECT type, lead_ids FROM data_subject_requests')).map((row) => ({
      type: row.type,
      ids: JSON.parse(row.lead_ids) as string[],
    }));

  it('leaves every erased lead in an audit row, and the erasure asked again finishes the job', async () => {
    database = await freshDatabase('sqlite');
    port = await freePort();
    server = await startServer(env(), port);
    const bearer = await token();
    const ids: string[] = [];
    for (let start = 0; start < LEADS; start += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${server!.baseUrl}/api/v1/lead`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ nome: `Pessoa ${start + i}`, email: EMAIL, mensagem: 'x'.repeat(200) }),
          }).then(async (res) => ((await res.json()) as { id: string }).id),
        ),
      );
      ids.push(...answers);
    }
    expect(new Set(ids).size).toBe(LEADS);

    // Watch the file from outside; kill the service once some of the leads are gone, but not all.
    const watcher = new Database(join(database.env.DATA_DIR, 'leads.sqlite'), { readonly: true, fileMustExist: true });
    const left = watcher.prepare('SELECT COUNT(*) AS n FROM leads');
    const request = erase(bearer).catch(() => undefined);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && (left.get() as { n: number }).n === LEADS;) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await server.stop('SIGKILL');
    await request;
    watcher.close();
    server = undefined;

    const stored = new Set((await database.query<{ id: string }>('SELECT id FROM leads')).map((row) => row.id));
    const gone = ids.filter((id) => !stored.has(id));
    // Killed mid-way: some erased, some not (else the test proves nothing).
    expect(gone.length).toBeGreaterThan(0);
    expect(stored.size).toBeGreaterThan(0);
    const rows = await audited();
    const recorded = new Set(rows.flatMap((row) => row.ids));
    expect(gone.filter((id) => !recorded.has(id))).toEqual([]);
    expect(rows.every((row) => row.type === 'erasure_batch')).toBe(true);

    // Again: the rest is erased, and its receipt counts only the rest.
    server = await startServer(env(), port);
    const res = await erase(await token());
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as { counts: { leads: number }; ids_truncated: boolean };
    expect(receipt.counts.leads).toBe(stored.size);
    expect(await database.query('SELECT id FROM leads')).toEqual([]);
    const all = (await audited()).flatMap((row) => row.ids);
    expect(all.length).toBe(LEADS);
    expect([...all].sort()).toEqual([...ids].sort());
  }, 180_000);
});
