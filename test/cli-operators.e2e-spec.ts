/** @system the built service and the CLI as processes */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, runCli, runCliOnTerminal, type TerminalOptions } from './support/child-output.js';
import { holdStoredLeads } from './support/screened-leads.js';

// The operator commands of the command-line client (login, list, export, import as an operator client, logout), run
// as their own processes against the built service, with clients made by `npm run clients:create`.

interface Client {
  client_id: string;
  client_secret: string;
  scope: string;
}

interface StoredLead {
  id: string;
  nome: string;
  email: string;
  origem: string | null;
  mensagem: string | null;
}

let work: string;
let configDir: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;
let operator: Client;
let reader: Client;

const run = (args: string[], options?: CliOptions) => runCli({ leads, home: work, configDir }, args, options);

/** The CLI on a terminal, with no operator in its environment. */
const runOnTerminal = (args: string[], options: TerminalOptions = {}) => runCliOnTerminal({ leads, home: work, configDir }, args, options);

const credentialsFile = () => join(configDir, 'credentials.json');
const readCredentials = () =>
  JSON.parse(readFileSync(credentialsFile(), 'utf8')) as { servers: Record<string, unknown>; logins: Record<string, Record<string, string>> };
const storedLogin = () => readCredentials().logins[server.baseUrl];
function editLogin(change: (entry: Record<string, string>) => void): void {
  const data = readCredentials();
  change(data.logins[server.baseUrl]);
  writeFileSync(credentialsFile(), JSON.stringify(data), { mode: 0o600 });
}

/** `npm run clients:create`, as the service's operator runs it (the same database settings as the service). */
function createClient(name: string, scope: string): Client {
  const output = execFileSync(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', name, '--scope', scope], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, ...database.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(output.toString().trim().split('\n').pop()!) as Client;
}

async function submit(lead: Record<string, string>): Promise<void> {
  const res = await fetch(`${server.baseUrl}/api/v1/lead`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lead) });
  expect(res.status).toBe(201);
}

/** The stored leads, newest first, as the read API orders them. */
const storedLeads = (where = '1 = 1') =>
  database.query<StoredLead>(`SELECT id, nome, email, origem, mensagem FROM leads WHERE ${where} ORDER BY received_at DESC, id DESC`);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-operators-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer({ ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...database.env }, port);
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
  operator = createClient('CLI operators e2e', 'leads:read leads:export leads:write');
  reader = createClient('CLI reader e2e', 'leads:read');
  for (let i = 1; i <= 5; i++) {
    await submit({
      nome: `Lead ${i}`,
      email: `lead${i}@example.com`,
      origem: i % 2 ? 'site' : 'feira',
      mensagem: i === 3 ? 'linha 1\nlinha 2, "aspas"' : `mensagem ${i}`,
    });
  }
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  rmSync(work, { recursive: true, force: true });
});

describe('login', () => {
  it('refuses a wrong secret with exit 3 and stores nothing', async () => {
    const result = await run(['login', '--client-id', operator.client_id], { input: 'not-the-secret\n' });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: invalid_client \(HTTP 401\): /);
    expect(existsSync(credentialsFile())).toBe(false);
    expect(await run(['login'])).toMatchObject({ code: 1, stderr: expect.stringContaining('login needs --client-id') });
    expect(await run(['login', '--client-id', operator.client_id, '--client-secret', 'x'])).toMatchObject({ code: 1 });
  });

  it('reads the secret from standard input and keeps the token, not the secret (mode 0600)', async () => {
    const result = await run(['login', '--client-id', operator.client_id], { input: `${operator.client_secret}\n` });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`logged in as ${operator.client_id} (scopes: leads:read leads:export leads:write)`);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(readFileSync(credentialsFile(), 'utf8')).not.toContain(operator.client_secret);
    expect(storedLogin()).toEqual({
      client_id: operator.client_id,
      scope: 'leads:read leads:export leads:write',
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      access_token_expires: expect.any(String),
    });
  });

  it('reads the secret on a terminal without echoing it', async () => {
    const result = await runOnTerminal(['login', '--client-id', operator.client_id], { prompt: 'Client secret: ', answer: operator.client_secret });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`logged in as ${operator.client_id}`);
    expect(result.stdout).not.toContain(operator.client_secret);
  });

  it('takes LEADS_CLIENT_SECRET, and keeps the secret with --save-secret', async () => {
    const result = await run(['login', '--client-id', operator.client_id, '--save-secret', '--json'], { env: { LEADS_CLIENT_SECRET: operator.client_secret } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      client_id: operator.client_id,
      scope: 'leads:read leads:export leads:write',
      access_token_expires: expect.any(String),
      secret_saved: true,
    });
    expect(storedLogin().client_secret).toBe(operator.client_secret);
  });

  it('an expired token is renewed from the saved secret or LEADS_CLIENT_SECRET, else exit 3 says to log in again', async () => {
    const expire = () => editLogin((entry) => (entry.access_token_expires = new Date(Date.now() - 1000).toISOString()));
    expire();
    const renewed = await run(['list', '--limit', '1', '--verbose']);
    expect(renewed.code).toBe(0);
    expect(renewed.stderr).toContain('POST /oauth2/token -> 200');
    expect(Date.parse(storedLogin().access_token_expires)).toBeGreaterThan(Date.now());

    expect((await run(['login', '--client-id', operator.client_id], { input: operator.client_secret })).code).toBe(0);
    expire();
    const refused = await run(['list', '--limit', '1']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`the operator login of ${operator.client_id} has expired; run \`leads login --client-id ${operator.client_id}\` again`);
    const fromEnv = await run(['list', '--limit', '1'], { env: { LEADS_CLIENT_SECRET: operator.client_secret } });
    expect(fromEnv.code).toBe(0);
    expect(storedLogin().client_secret).toBeUndefined();
  });
});

describe('list', () => {
  it('prints the JSON answer, with filters; --all follows next_cursor into one document', async () => {
    const all = await storedLeads();
    const page = await run(['list', '--limit', '2']);
    expect(page.code).toBe(0);
    const body = JSON.parse(page.stdout) as { data: { id: string }[]; next_cursor: string | null };
    expect(body.data.map((lead) => lead.id)).toEqual(all.slice(0, 2).map((lead) => lead.id));
    expect(body.next_cursor).toEqual(expect.any(String));

    const next = JSON.parse((await run(['list', '--limit', '2', '--cursor', body.next_cursor!])).stdout) as { data: { id: string }[] };
    expect(next.data.map((lead) => lead.id)).toEqual(all.slice(2, 4).map((lead) => lead.id));

    const everything = await run(['list', '--limit', '2', '--all']);
    expect(everything.code).toBe(0);
    const document = JSON.parse(everything.stdout) as { data: StoredLead[]; next_cursor: null };
    expect(document.next_cursor).toBeNull();
    expect(document.data.map((lead) => lead.id)).toEqual(all.map((lead) => lead.id));
    expect(document.data[0]).toMatchObject({ nome: all[0].nome, email: all[0].email, client_id: null, registration_id: null });

    const feira = JSON.parse((await run(['list', '--origem', 'feira', '--json'])).stdout) as { data: StoredLead[] };
    expect(feira.data.map((lead) => lead.email)).toEqual((await storedLeads("origem = 'feira'")).map((lead) => lead.email));
    const one = JSON.parse((await run(['list', '--email', 'LEAD3@Example.com'])).stdout) as { data: StoredLead[] };
    expect(one.data.map((lead) => lead.email)).toEqual(['lead3@example.com']);
    // A search: the start of a word of nome, e-mail or empresa, any case; refused with exit 2 when it is no search.
    const found = JSON.parse((await run(['list', '--q', 'LEAD4', '--screening', 'all'])).stdout) as { data: StoredLead[] };
    expect(found.data.map((lead) => lead.email)).toEqual(['lead4@example.com']);
    const leads = JSON.parse((await run(['list', '--q', 'lead', '--channel', 'api'])).stdout) as { data: StoredLead[] };
    expect(leads.data.map((lead) => lead.id)).toEqual((await storedLeads("channel = 'api'")).map((lead) => lead.id));
    expect(leads.data.length).toBeGreaterThanOrEqual(5);
    const refused = await run(['list', '--q', '@@']);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('q')]);

    // Plain dates, as a person types them: days in the service's time zone.
    const since = JSON.parse((await run(['list', '--limit', '200', '--since', '2026-01-01'])).stdout) as { data: StoredLead[] };
    expect(since.data.map((lead) => lead.id)).toEqual(all.map((lead) => lead.id));
    expect(JSON.parse((await run(['list', '--until', '2026-01-01'])).stdout).data).toEqual([]);
  });

  it('on a terminal: a table of the columns that fit, line breaks shown as spaces', async () => {
    const result = await runOnTerminal(['list', '--limit', '2', '--origem', 'site'], { columns: 60 });
    expect(result.code).toBe(0);
    const lines = result.stdout.split(/\r?\n/).filter((line) => line.trim() !== '');
    expect(lines[0]).toMatch(/^received_at\s+nome\s+email/);
    expect(lines[0]).not.toContain('mensagem');
    for (const line of lines.slice(0, 4)) expect(Array.from(line).length).toBeLessThanOrEqual(60);
    expect(lines.slice(2, 4).map((line) => /lead\d@example\.com/.exec(line)?.[0])).toEqual(['lead5@example.com', 'lead3@example.com']);
    expect(lines[4]).toMatch(/^more: leads list --cursor \S+ --limit 2 \(and the same filters\)$/);

    const wide = await runOnTerminal(['list', '--email', 'lead3@example.com'], { columns: 250 });
    expect(wide.stdout).toContain('linha 1 linha 2, "aspas"');
  });

  it('a bad query parameter is one clear line and exit 2; no login is exit 3', async () => {
    const result = await run(['list', '--limit', '500']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: invalid_query \(HTTP 400\): .+\n {2}query parameter limit: .+/);
    expect(await run(['list', '--bogus'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown option --bogus') });
    expect(await run(['list', '--dry-run'])).toMatchObject({ code: 1, stderr: expect.stringContaining('list does not take --dry-run') });
    const elsewhere = await run(['list'], { env: { LEADS_CONFIG_DIR: join(work, 'nobody') } });
    expect(elsewhere).toMatchObject({ code: 3, stderr: expect.stringContaining('run `leads login --client-id <id>` first') });
  });

  it('LEADS_CLIENT_ID with LEADS_CLIENT_SECRET work without a login and store nothing', async () => {
    const dir = join(work, 'ci');
    const result = await run(['list', '--limit', '1'], {
      env: { LEADS_CONFIG_DIR: dir, LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).data).toHaveLength(1);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('export', () => {
  it('CSV to a file: every stored lead, through a temporary file renamed at the end (mode 0600)', async () => {
    const dir = mkdtempSync(join(work, 'export-'));
    const output = join(dir, 'leads.csv');
    const result = await run(['export', '--format', 'csv', '--output', output]);
    expect(result.code).toBe(0);
    const stored = await storedLeads();
    expect(result.stdout).toMatch(
      new RegExp(`^exported ${stored.length} rows \\(\\d+(\\.\\d)? (B|KiB)\\) to ${output.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`),
    );
    expect(readdirSync(dir)).toEqual(['leads.csv']);
    expect(statSync(output).mode & 0o777).toBe(0o600);
    const rows = parseCsv(readFileSync(output), { columns: true, bom: true }) as Record<string, string>[];
    expect(rows.map((row) => [row.id, row.nome, row.email, row.origem, row.mensagem])).toEqual(
      stored.map((lead) => [lead.id, lead.nome, lead.email, lead.origem, lead.mensagem]),
    );
  });

  it("the spreadsheet profile (--delimiter ';', --columns) and JSON Lines to standard output, with filters", async () => {
    const dir = mkdtempSync(join(work, 'export-'));
    const output = join(dir, 'planilha.csv');
    expect((await run(['export', '--format', 'csv', '--delimiter', ';', '--origem', 'site', '--output', output])).code).toBe(0);
    const bytes = readFileSync(output);
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const rows = parseCsv(bytes, { columns: true, bom: true, delimiter: ';' }) as Record<string, string>[];
    expect(Object.keys(rows[0])).toEqual(['Recebido em', 'Nome', 'E-mail', 'Telefone', 'Empresa', 'Mensagem', 'Origem']);
    expect(rows.map((row) => row['E-mail'])).toEqual((await storedLeads("origem = 'site'")).map((lead) => lead.email));
    const chosen = await run(['export', '--format', 'csv', '--columns', 'email,origem', '--origem', 'site']);
    expect(chosen.stdout).toBe(`email,origem\r\n${(await storedLeads("origem = 'site'")).map((lead) => `${lead.email},site\r\n`).join('')}`);

    const jsonl = await run(['export', '--format', 'jsonl']);
    expect(jsonl.code).toBe(0);
    const lines = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as StoredLead);
    expect(lines.map((lead) => lead.id)).toEqual((await storedLeads()).map((lead) => lead.id));
  });

  it('without leads:export: one clear line, exit 3, no file', async () => {
    const dir = mkdtempSync(join(work, 'export-'));
    const result = await run(['export', '--format', 'csv', '--output', join(dir, 'x.csv')], {
      env: { LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: insufficient_scope \(HTTP 403\): /);
    expect(readdirSync(dir)).toEqual([]);
    expect(await run(['export'])).toMatchObject({ code: 1, stderr: expect.stringContaining('export needs --format') });
    expect((await run(['export', '--format', 'xml'])).code).toBe(2);
  });

  it('an answer cut short fails with exit 5 and leaves no file', async () => {
    let stand: Server | undefined;
    try {
      stand = createServer((req, res) => {
        if (req.url === '/oauth2/token') {
          res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(JSON.stringify({ access_token: 'a.b.c', token_type: 'Bearer', expires_in: 900, scope: 'leads:export' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'text/csv' });
        res.write('id,nome\n1,Ana\n');
        setTimeout(() => res.socket?.destroy(), 50);
      });
      const port = await freePort();
      await new Promise<void>((resolve) => stand!.listen(port, '127.0.0.1', resolve));
      const dir = mkdtempSync(join(work, 'export-'));
      const result = await run(['export', '--format', 'csv', '--output', join(dir, 'cut.csv'), '--base-url', `http://127.0.0.1:${port}`], {
        env: { LEADS_CLIENT_ID: 'c', LEADS_CLIENT_SECRET: 's' },
      });
      expect(result.code).toBe(5);
      expect(result.stderr).toContain('broke off');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      stand?.close();
    }
  });
});

describe('import as an operator', () => {
  it("sends as the operator client: a ';' file with a BOM and quoted line breaks; a rerun replays", async () => {
    expect((await run(['login', '--client-id', operator.client_id], { input: operator.client_secret })).code).toBe(0);
    const path = join(work, 'operador.csv');
    writeFileSync(
      path,
      '\uFEFFnome;email;mensagem;origem\r\nRui Operador;rui@example.com;"uma\r\nduas; três";importado\r\nSol Operadora;sol@example.com;;importado\r\n',
    );
    const first = await run(['import', path]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`2 stored, 0 already stored (replayed), 0 failed (CSV, delimiter ';'; sent as operator ${operator.client_id})`);
    expect(await database.query("SELECT nome, mensagem, channel, client_id, registration_id FROM leads WHERE origem = 'importado' ORDER BY nome")).toEqual([
      { nome: 'Rui Operador', mensagem: 'uma\r\nduas; três', channel: 'cli', client_id: operator.client_id, registration_id: null },
      { nome: 'Sol Operadora', mensagem: null, channel: 'cli', client_id: operator.client_id, registration_id: null },
    ]);
    const again = await run(['import', path, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ stored: 0, replayed: 2, failed: 0, sent_as: `operator ${operator.client_id}` });
  });

  it('a login without leads:write stops before any row is sent', async () => {
    const path = join(work, 'leitor.csv');
    writeFileSync(path, 'nome,email\nLeo Leitor,leo@example.com\n');
    const result = await run(['import', path], { env: { LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`the operator login ${reader.client_id} has the scopes "leads:read", not leads:write`);
    expect(await database.query("SELECT id FROM leads WHERE email = 'leo@example.com'")).toEqual([]);
  });
});

describe('logout', () => {
  it('forgets the operator login; list then needs a new one', async () => {
    expect(storedLogin()).toBeDefined();
    const result = await run(['logout']);
    expect(result).toMatchObject({ code: 0, stdout: `logged out ${operator.client_id} (operator login forgotten)\n` });
    expect(existsSync(credentialsFile())).toBe(false);
    expect((await run(['list'])).code).toBe(3);
    expect(await run(['logout'])).toMatchObject({ code: 0, stdout: expect.stringContaining('nothing to do') });
  });
});

describe('reviewing held leads', () => {
  it('list --screening held shows them and list says how many await review (on stderr); release and spam decide, with leads:screen', async () => {
    const screener = createClient('CLI reviewer e2e', 'leads:read leads:screen');
    const env = { LEADS_CONFIG_DIR: join(work, 'reviewer'), LEADS_CLIENT_ID: screener.client_id, LEADS_CLIENT_SECRET: screener.client_secret };
    await submit({ nome: 'Revisar Um', email: 'revisar1@example.com', origem: 'review' });
    await submit({ nome: 'Revisar Dois', email: 'revisar2@example.com', origem: 'review' });
    const [second, first] = await storedLeads("origem = 'review'");
    await holdStoredLeads(database, [first.id, second.id]);

    const listed = await run(['list', '--origem', 'review'], { env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ data: [], next_cursor: null, held_count: 2 });
    expect(listed.stderr).toBe('2 leads awaiting review (leads list --screening held)\n');
    const held = await run(['list', '--origem', 'review', '--screening', 'held'], { env });
    expect((JSON.parse(held.stdout) as { data: StoredLead[] }).data.map((lead) => lead.id)).toEqual([second.id, first.id]);

    const released = await run(['release', first.id], { env });
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout).screening).toMatchObject({ verdict: 'accepted', reasons: ['disposable_email'], decided_by: screener.client_id });
    const spam = await runOnTerminal(['spam', second.id], { env });
    expect(spam.code).toBe(0);
    expect(spam.stdout).toContain(`marked spam ${second.id}: spam (reasons: disposable_email), by ${screener.client_id} at `);

    const after = await run(['list', '--origem', 'review'], { env });
    expect([(JSON.parse(after.stdout) as { data: StoredLead[] }).data.map((lead) => lead.id), after.stderr]).toEqual([[first.id], '']);
    const spamList = await run(['list', '--origem', 'review', '--screening', 'spam'], { env });
    expect((JSON.parse(spamList.stdout) as { data: StoredLead[] }).data.map((lead) => lead.id)).toEqual([second.id]);

    const readerEnv = { LEADS_CONFIG_DIR: join(work, 'reviewer-reader'), LEADS_CLIENT_ID: reader.client_id, LEADS_CLIENT_SECRET: reader.client_secret };
    const refused = await run(['release', second.id], { env: readerEnv });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('leads:screen');
    const unknown = await run(['release', '019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('lead_not_found');
    expect(await run(['release'], { env })).toMatchObject({ code: 1, stderr: expect.stringContaining("release needs the lead's id") });
  });
});
