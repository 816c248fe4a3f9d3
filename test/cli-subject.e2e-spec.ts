/** @system the built service and the CLI as processes */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import type { Lead } from '../src/leads/lead.entity.js';
import { seedLeads } from './support/seed-leads.js';
import { storedLead } from './support/stored-leads.js';
import { ON_POSTGRES, TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, runCli, runCliOnTerminal, type TerminalOptions } from './support/child-output.js';

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

/** The CLI on a terminal as `client`. */
const runOnTerminal = (args: string[], client: Client, options: TerminalOptions = {}) =>
  runCliOnTerminal({ leads, home: work, configDir }, args, { ...options, env: as(client) });

const leadsOf = async (email: string) =>
  (JSON.parse((await run(['subject', 'access', email], { env: as(privacy) })).stdout).leads as { id: string }[]).map((lead) => lead.id);

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
    expect(await run(['subject'])).toMatchObject({ code: 1, stderr: expect.stringContaining('subject needs a command: access, erase, revoke, list') });
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
    expect(copy).toMatchObject({ type: 'access', counts: { leads: 2 }, request_ids: [expect.any(String)] });
    expect(copy.leads.map((lead: { id: string }) => lead.id).sort()).toEqual([...ids].sort());

    const refused = await run(['subject', 'erase', 'cli.pessoa@example.com', '--yes'], { env: as(reader) });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('leads:erase');

    const revoke = await run(['subject', 'revoke', 'cli.pessoa@example.com', '--json'], { env: as(privacy) });
    expect(revoke.code).toBe(0);
    expect(JSON.parse(revoke.stdout)).toMatchObject({ type: 'consent_revocation', counts: { leads: 2, revoked: 2 } });

    const erase = await run(['subject', 'erase', 'cli.pessoa@example.com', '--yes'], { env: as(privacy) });
    expect(erase.code).toBe(0);
    expect(JSON.parse(erase.stdout)).toMatchObject({ type: 'erasure', counts: { leads: 2 } });
    expect(JSON.parse((await run(['subject', 'access', 'cli.pessoa@example.com'], { env: as(privacy) })).stdout)).toMatchObject({
      leads: [],
      consent_texts: [],
      counts: { leads: 0, consent_texts: 0 },
    });

    const bad = await run(['subject', 'erase', 'not-an-address', '--yes'], { env: as(privacy) });
    expect(bad.code).toBe(2);
  });

  it('list shows the queue of requests, masked and with due dates: a table on a terminal, JSON otherwise', async () => {
    const revoke = await run(['subject', 'revoke', 'fila.cli@example.com', '--json'], { env: as(privacy) });
    const id = JSON.parse(revoke.stdout).request_id as string;
    const listed = await run(['subject', 'list', '--limit', '5'], { env: as(reader) });
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page.data[0]).toMatchObject({ id, type: 'consent_revocation', status: 'completed', channel: 'operator', email_masked: 'f***@example.com' });
    const table = await runOnTerminal(['subject', 'list', '--status', 'completed'], reader);
    expect(table.stdout).toMatch(/received_at\s+type\s+status\s+due_at\s+email/);
    expect(table.stdout).toContain('f***@example.com');
    expect(table.stdout).not.toContain('fila.cli@example.com');
    const refused = await run(['subject', 'list', '--status', 'nope'], { env: as(reader) });
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('status must be one or more of') });
  });

  it('access follows the cursor through every page and writes one JSON document as they come, to stdout or --output', async () => {
    const wording = 'Aceito receber comunicações (CLI, páginas).';
    const sha256 = createHash('sha256').update(wording).digest('hex');
    const basis = [
      {
        category: 'communications',
        type: 'consent',
        status: 'granted',
        recorded_at: '2026-11-01T00:00:00.000Z',
        channel: 'api',
        consent_text_sha256: sha256,
        revoked_at: null,
      },
    ] as Lead['legalBases'];
    const start = Date.now() - 3_600_000;
    const rows = Array.from({ length: 1201 }, (_, i) =>
      storedLead(i, { email: 'Muitas.Paginas@example.com', receivedAt: new Date(start + i), legalBases: i % 600 === 0 ? basis : null }),
    );
    await seedLeads(database, rows, [{ sha256, text: wording }]);

    const copy = await run(['subject', 'access', 'muitas.paginas@example.com'], { env: as(reader) });
    expect(copy).toMatchObject({ code: 0, stderr: '' });
    const document = JSON.parse(copy.stdout);
    expect(document.leads.map((lead: { id: string }) => lead.id)).toEqual(rows.map((row) => row.id).reverse());
    expect(document).toMatchObject({ type: 'access', consent_texts: [{ sha256, text: wording }], counts: { leads: 1201, consent_texts: 1 } });
    expect(document.request_ids).toHaveLength(3);
    // Pretty-printed as before: two spaces a level.
    expect(copy.stdout.startsWith('{\n  "type": "access",\n')).toBe(true);

    const file = join(work, 'copia.json');
    const toFile = await run(['subject', 'access', 'muitas.paginas@example.com', '--output', file], { env: as(reader) });
    expect(toFile).toMatchObject({ code: 0, stdout: '' });
    expect(JSON.parse(readFileSync(file, 'utf8')).leads).toEqual(document.leads);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('erase without a terminal and without --yes refuses at once and erases nothing', async () => {
    const ids = [await submit('sem.terminal@example.com')];
    const refused = await run(['subject', 'erase', 'sem.terminal@example.com'], { env: as(privacy) });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain('there is no terminal to confirm it on: pass --yes to erase');
    expect(refused.stderr).toContain('Nothing was erased.');
    expect(await leadsOf('sem.terminal@example.com')).toEqual(ids);
  });

  it('erase --dry-run prints what would be erased, and erases nothing', async () => {
    const ids = [await submit('previa.cli@example.com'), await submit('Previa.Cli@example.com')];
    const dry = await run(['subject', 'erase', 'previa.cli@example.com', '--dry-run'], { env: as(privacy) });
    expect(dry.code).toBe(0);
    const receipt = JSON.parse(dry.stdout);
    expect(receipt).toMatchObject({ type: 'erasure', dry_run: true, counts: { leads: 2, idempotency_keys: 0 } });
    expect([...receipt.lead_ids].sort()).toEqual([...ids].sort());
    expect((await leadsOf('previa.cli@example.com')).sort()).toEqual([...ids].sort());
    expect(await run(['subject', 'erase', 'previa.cli@example.com', '--dry-run', '--yes'], { env: as(privacy) })).toMatchObject({ code: 1 });
    expect(await run(['subject', 'access', 'previa.cli@example.com', '--dry-run'], { env: as(privacy) })).toMatchObject({ code: 1 });

    const terminal = await runOnTerminal(['subject', 'erase', 'previa.cli@example.com', '--dry-run'], privacy);
    expect(terminal.code).toBe(0);
    // No outbox message on SQLite for a lead stored while no webhook endpoint exists (decision 0027).
    expect(terminal.stdout).toContain(`would erase (dry run: nothing was erased): leads 2, webhook_messages ${ON_POSTGRES ? 2 : 0},`);
    expect(terminal.stdout).not.toContain('Type the address again');
    expect((await leadsOf('previa.cli@example.com')).length).toBe(2);
  });

  it('erase on a terminal shows the counts and asks for the address again: another answer erases nothing, the same one erases', async () => {
    const ids = [await submit('confirma.cli@example.com')];
    const prompt = 'Type the address again to erase: ';
    const wrong = await runOnTerminal(['subject', 'erase', 'confirma.cli@example.com'], privacy, { prompt, answer: 'outra@example.com' });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('would erase: leads 1,');
    expect(wrong.stdout).toContain('This cannot be undone.');
    expect(wrong.stdout).toContain('the address typed does not match; nothing was erased');
    expect(await leadsOf('confirma.cli@example.com')).toEqual(ids);

    const right = await runOnTerminal(['subject', 'erase', 'confirma.cli@example.com'], privacy, { prompt, answer: ' Confirma.CLI@example.com ' });
    expect(right.code).toBe(0);
    expect(right.stdout).toMatch(/erased: leads 1, /);
    expect(right.stdout).toContain(`  ${ids[0]}`);
    expect(await leadsOf('confirma.cli@example.com')).toEqual([]);
  });
});
