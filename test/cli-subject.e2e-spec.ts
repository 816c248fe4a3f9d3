/** @system the built service and the CLI as processes */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, runCli } from './support/child-output.js';

// `leads subject access|erase|revoke <email>` (docs/decisions/0029-data-subject-requests.md), run as its own process
// against the built service, with operator clients made by `npm run clients:create`.

interface Client {
  client_id: string;
  client_secret: string;
}

let work: string;
let configDir: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;
let privacy: Client;
let reader: Client;
const secretsKey = randomBytes(32).toString('base64');

const run = (args: string[], options?: CliOptions) => runCli({ leads, home: work, configDir }, args, options);

function createClient(name: string, scope: string): Client {
  const output = execFileSync(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', name, '--scope', scope], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, SECRETS_KEY: secretsKey, ...database.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(output.toString().trim().split('\n').pop()!) as Client;
}

const as = (client: Client) => ({ LEADS_CLIENT_ID: client.client_id, LEADS_CLIENT_SECRET: client.client_secret });

async function submit(email: string): Promise<string> {
  const res = await fetch(`${server.baseUrl}/api/v1/lead`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ nome: 'Pessoa CLI', email }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-subject-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer(
    { ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, SECRETS_KEY: secretsKey, ...database.env },
    port,
  );
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
  privacy = createClient('CLI privacy e2e', 'leads:read leads:erase');
  reader = createClient('CLI reader e2e', 'leads:read');
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  rmSync(work, { recursive: true, force: true });
});

describe('leads subject', () => {
  it('--help lists the three requests; bad usage exits 1', async () => {
    const help = await run(['subject', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: leads subject access|erase|revoke <email>');
    for (const command of ['access <email>', 'erase <email>', 'revoke <email>']) expect(help.stdout).toContain(command);
    expect((await run(['--help'])).stdout).toContain('subject <command> <email>');
    expect(await run(['subject'])).toMatchObject({ code: 1, stderr: expect.stringContaining('subject needs a command: access, erase, revoke') });
    expect(await run(['subject', 'forget', 'a@example.com'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown subject command "forget"') });
    expect(await run(['subject', 'erase'], { env: as(privacy) })).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("needs the person's e-mail address"),
    });
    expect(await run(['subject', 'erase', 'a@example.com'])).toMatchObject({ code: 3 });
  });

  it('access prints the leads, revoke and erase print their receipts; a client without leads:erase exits 3', async () => {
    const ids = [await submit('cli.pessoa@example.com'), await submit('CLI.Pessoa@example.com')];
    await submit('someone.else@example.com');

    const access = await run(['subject', 'access', 'Cli.Pessoa@Example.com'], { env: as(privacy) });
    expect(access.code).toBe(0);
    const copy = JSON.parse(access.stdout);
    expect(copy).toMatchObject({ type: 'access', counts: { leads: 2 } });
    expect([...copy.lead_ids].sort()).toEqual([...ids].sort());

    const refused = await run(['subject', 'erase', 'cli.pessoa@example.com'], { env: as(reader) });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('leads:erase');

    const revoke = await run(['subject', 'revoke', 'cli.pessoa@example.com', '--json'], { env: as(privacy) });
    expect(revoke.code).toBe(0);
    expect(JSON.parse(revoke.stdout)).toMatchObject({ type: 'consent_revocation', counts: { leads: 2, revoked: 2 } });

    const erase = await run(['subject', 'erase', 'cli.pessoa@example.com'], { env: as(privacy) });
    expect(erase.code).toBe(0);
    expect(JSON.parse(erase.stdout)).toMatchObject({ type: 'erasure', counts: { leads: 2 } });
    expect(JSON.parse((await run(['subject', 'access', 'cli.pessoa@example.com'], { env: as(privacy) })).stdout)).toMatchObject({ lead_ids: [], leads: [] });

    const bad = await run(['subject', 'erase', 'not-an-address'], { env: as(privacy) });
    expect(bad.code).toBe(2);
  });
});
