/** @system the built service and the CLI as processes */
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, outputOf, runCli } from './support/child-output.js';

// The command-line client as a user gets it: downloaded with curl from the running built server, then run as its own
// process (through its shebang) for every command.

const GENEROUS_LIMITS = {
  RATE_LIMIT_ANONYMOUS: '1000000/60s',
  RATE_LIMIT_AGENT: '10000000/60s',
  RATE_LIMIT_REGISTRATION: '1000000/60s',
  RATE_LIMIT_TOKEN: '1000000/60s',
};
const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

let work: string;
let configDir: string;
let leads: string;
let database: TestDatabase;
let server: ServerProcess;

const run = (args: string[], options?: CliOptions) => runCli({ leads, home: work, configDir }, args, options);

const credentialsFile = () => join(configDir, 'credentials.json');
const readCredentials = () => JSON.parse(readFileSync(credentialsFile(), 'utf8')) as { servers: Record<string, Record<string, string>> };
const stored = () => readCredentials().servers[server.baseUrl];
function editStored(change: (entry: Record<string, string>) => void): void {
  const data = readCredentials();
  change(data.servers[server.baseUrl]);
  writeFileSync(credentialsFile(), JSON.stringify(data), { mode: 0o600 });
}
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Reads the child server's database directly. */
async function query(sql: string): Promise<Record<string, unknown>[]> {
  if (database.env.DATA_DIR) {
    const db = new Database(join(database.env.DATA_DIR, 'leads.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const client = new Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}
const leadCount = async () => Number((await query('SELECT COUNT(*) AS n FROM leads'))[0].n);

async function stop(process: ServerProcess): Promise<void> {
  if (process.child.exitCode === null) {
    process.child.kill('SIGTERM');
    await process.exit;
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  database = await freshDatabase();
  const port = await freePort();
  server = await startServer({ ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...database.env }, port);
  execFileSync('sh', ['-c', `curl -fsSL ${server.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
});

afterAll(async () => {
  if (server) await stop(server);
  await database?.drop();
  rmSync(work, { recursive: true, force: true });
});

describe('distribution', () => {
  it('serves the file with the base URL baked in, and /cli/ shows the install line, version and its SHA-256', async () => {
    const file = readFileSync(leads);
    expect(file.toString('utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(file.toString('utf8')).toContain(JSON.stringify(server.baseUrl));
    expect(file.toString('utf8')).not.toContain('__LEADS_BASE_URL__');
    expect(statSync(leads).mode & 0o111).toBeTruthy();

    const download = await fetch(`${server.baseUrl}/cli/leads`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="leads"');
    expect(download.headers.get('access-control-allow-origin')).toBe('*');
    const etag = download.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    // curl, not fetch: fetch adds Cache-Control: no-cache to conditional requests, which rightly defeats them.
    const conditional = execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `If-None-Match: ${etag}`, `${server.baseUrl}/cli/leads`]);
    expect(conditional.toString()).toBe('304');

    const page = await fetch(`${server.baseUrl}/cli/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain(`curl -fsSL ${server.baseUrl}/cli/leads -o leads &amp;&amp; chmod +x leads`);
    expect(html).toContain(`<td id="version">${PACKAGE_VERSION}</td>`);
    const sha256 = createHash('sha256').update(file).digest('hex');
    expect(html).toContain(`<code id="sha256">${sha256}</code>`);
  });

  it('--version, --help globally and per command', async () => {
    expect(await run(['--version'])).toMatchObject({ code: 0, stdout: `${PACKAGE_VERSION}\n` });
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['health', 'info', 'submit', 'sandbox', 'register', 'token', 'graphql', 'import', 'login', 'list', 'export', 'logout']) {
      expect(help.stdout).toContain(`  ${command}`);
      const own = await run([command, '--help']);
      expect(own.code).toBe(0);
      expect(own.stdout).toContain(`Usage: leads ${command}`);
    }
  });

  it("the README's command list names every command the CLI's help lists", async () => {
    const help = (await run(['--help'])).stdout;
    const commands = [...help.slice(help.indexOf('Commands:'), help.indexOf('Global options:')).matchAll(/^ {2}([a-z]+)/gm)].map((match) => match[1]);
    expect(commands).toEqual(expect.arrayContaining(['import', 'webhooks', 'subject', 'logout']));
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Command-line client'));
    const list = section.slice(section.indexOf('Commands: '), section.indexOf('--json` prints raw responses'));
    for (const command of commands) expect([command, list.includes(`\`${command}\``)]).toEqual([command, true]);
  });

  it('usage errors exit 1', async () => {
    expect((await run([])).code).toBe(1);
    expect(await run(['frobnicate'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown command "frobnicate"') });
    expect(await run(['submit', '--bogus', 'x'])).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown option --bogus') });
    expect(await run(['health', 'extra'])).toMatchObject({ code: 1 });
    expect(await run(['graphql'])).toMatchObject({ code: 1 });
    expect(await run(['health', '--base-url', 'ftp://x'])).toMatchObject({ code: 1 });
  });
});

describe('anonymous commands', () => {
  it('health and info', async () => {
    const health = await run(['health']);
    expect(health).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ok \(version 1\.0\.0\)/) });
    const raw = await run(['health', '--json']);
    expect(JSON.parse(raw.stdout)).toMatchObject({ status: 'ok', version: PACKAGE_VERSION });
    const info = await run(['info']);
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(`links.cli: ${server.baseUrl}/cli/`);
    expect(JSON.parse((await run(['info', '--json'])).stdout).links.cli).toBe(`${server.baseUrl}/cli/`);
  });

  it('sandbox: the rules on invisible values, IP-literal e-mails and digitless telephones are told with the service’s reasons', async () => {
    const invalid = await run(['sandbox', '--nome', '\u200b\u3164', '--email', 'ana@1.2.3.4', '--telefone', '((((((((']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('  /nome: nome must not be blank: it needs at least one visible character.');
    expect(invalid.stderr).toContain(
      '  /email: email must be an address with one @, a local part of at most 64 bytes and a dotted domain name (not an IP address), like nome@empresa.com.br.',
    );
    expect(invalid.stderr).toContain('  /telefone: telefone must have at least 8 digits and may contain only digits, spaces and + - ( ) . characters.');
    expect(await leadCount()).toBe(0);
  });

  it('sandbox: valid exits 0, invalid exits 2 with code, detail, hint and pointer', async () => {
    const valid = await run(['sandbox', '--nome', ' Maria Silva ', '--email', 'maria@example.com']);
    expect(valid.code).toBe(0);
    expect(valid.stdout).toContain('valid (nothing stored)');
    expect(valid.stdout).toContain('nome: Maria Silva');
    const invalid = await run(['sandbox', '--nome', 'Maria', '--email', 'not-an-email']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/error: validation_failed \(HTTP 422\): .+/);
    expect(invalid.stderr).toMatch(/ {2}\/email: .+/);
    expect(invalid.stderr).toMatch(/hint: .+/);
    const raw = await run(['sandbox', '--json', '--email', 'x'], {});
    expect(raw.code).toBe(2);
    expect(JSON.parse(raw.stdout)).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(await leadCount()).toBe(0);
  });

  it('submit via flags, via stdin JSON and via --file; bad JSON on stdin is invalid input', async () => {
    const flags = await run(['submit', '--nome', 'Ana Flags', '--email', 'ana@example.com', '--empresa', 'Acme', '--origem', 'cli']);
    expect(flags.code).toBe(0);
    expect(flags.stdout).toMatch(/^stored: lead [0-9a-f-]{36} received at /);
    const stdin = await run(['submit', '--json'], { input: JSON.stringify({ nome: 'Bia Stdin', email: 'bia@example.com', mensagem: 'via stdin' }) });
    expect(stdin.code).toBe(0);
    expect(JSON.parse(stdin.stdout)).toMatchObject({ status: 'received' });
    const path = join(work, 'lead.json');
    writeFileSync(path, JSON.stringify({ nome: 'Caio File', email: 'caio@example.com' }));
    expect((await run(['submit', '--file', path, '--empresa', 'Override'])).code).toBe(0);
    expect((await run(['submit'], { input: '{not json' })).code).toBe(2);
    const rows = await query('SELECT nome, empresa, registration_id FROM leads ORDER BY nome');
    expect(rows).toEqual([
      { nome: 'Ana Flags', empresa: 'Acme', registration_id: null },
      { nome: 'Bia Stdin', empresa: null, registration_id: null },
      { nome: 'Caio File', empresa: 'Override', registration_id: null },
    ]);
  });

  it('server down exits 5', async () => {
    const port = await freePort();
    const down = await run(['health', '--base-url', `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(5);
    expect(down.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect((await run(['submit', '--nome', 'X', '--email', 'x@example.com'], { env: { LEADS_BASE_URL: `http://127.0.0.1:${port}` } })).code).toBe(5);
  });
});

describe('registration and tokens', () => {
  it('token without a registration exits 3', async () => {
    expect(await run(['token'])).toMatchObject({ code: 3, stderr: expect.stringContaining('leads register') });
  });

  it('register stores the credentials with mode 0600', async () => {
    const result = await run(['register', '--name', 'CLI e2e']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^registered reg_[A-Za-z0-9_-]+ \(anonymous\)/);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(stored()).toMatchObject({
      registration_id: expect.stringMatching(/^reg_/),
      registration_type: 'anonymous',
      client_name: 'CLI e2e',
      identity_assertion: expect.any(String),
      assertion_expires: expect.any(String),
      access_token: expect.any(String),
    });
  });

  it('token prints a JWT, reuses it, and renews it from the assertion when it is gone', async () => {
    const first = await run(['token', '--verbose']);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(first.stderr).not.toContain('/oauth2/token');
    const second = await run(['token']);
    expect(second.stdout).toBe(first.stdout);
    editStored((entry) => {
      delete entry.access_token;
      delete entry.access_token_expires;
    });
    const renewed = await run(['token', '--verbose']);
    expect(renewed.code).toBe(0);
    expect(count(renewed.stderr, 'POST /oauth2/token -> 200')).toBe(1);
    expect(renewed.stdout).not.toBe(first.stdout);
    expect(stored().access_token).toBe(renewed.stdout.trim());
  });

  it('submit with the stored token records the registration', async () => {
    const result = await run(['submit', '--json', '--nome', 'Dora Agent', '--email', 'dora@example.com']);
    expect(result.code).toBe(0);
    const { id } = JSON.parse(result.stdout);
    expect(await query(`SELECT registration_id FROM leads WHERE id = '${id}'`)).toEqual([{ registration_id: stored().registration_id }]);
  });

  it('a refused token is renewed exactly once, then the call succeeds', async () => {
    editStored((entry) => {
      entry.access_token = `${entry.access_token.slice(0, -6)}AAAAAA`;
    });
    const result = await run(['info', '--verbose']);
    expect(result.code).toBe(0);
    expect(count(result.stderr, 'GET /api/v1/info -> 401')).toBe(1);
    expect(count(result.stderr, 'POST /oauth2/token -> 200')).toBe(1);
    expect(count(result.stderr, 'GET /api/v1/info -> 200')).toBe(1);
  });

  it('graphql runs a query with variables; a bad query exits 2', async () => {
    const result = await run(['graphql', '{ health { status version } }']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ health: { status: 'ok', version: PACKAGE_VERSION } });
    const withVariables = await run(['graphql', 'query ($slug: String!) { doc(slug: $slug) { slug } }', '--variables', '{"slug":"quickstart"}', '--json']);
    expect(withVariables.code).toBe(0);
    expect(JSON.parse(withVariables.stdout)).toEqual({ data: { doc: { slug: 'quickstart' } } });
    const bad = await run(['graphql', '{ nope }']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: GRAPHQL_VALIDATION_FAILED');
  });

  it('an expired assertion is refreshed: the same registration, a rotated refresh token, no new registration', async () => {
    expect((await run(['register', '--email', 'ops@example.com', '--name', 'Mailer'])).code).toBe(0);
    const before = stored();
    expect(before).toMatchObject({ registration_type: 'identity_assertion', email: 'ops@example.com', refresh_token: expect.stringMatching(/^rt_/) });
    editStored((entry) => {
      entry.assertion_expires = new Date(Date.now() - 1000).toISOString();
      delete entry.access_token;
    });
    const result = await run(['token', '--verbose']);
    expect(result.code).toBe(0);
    expect(count(result.stderr, 'POST /api/v1/agent/identity -> 200')).toBe(1);
    expect(result.stderr).not.toContain('warning');
    expect(stored()).toMatchObject({ registration_id: before.registration_id, email: 'ops@example.com', client_name: 'Mailer' });
    expect(stored().refresh_token).not.toBe(before.refresh_token);
    expect(Date.parse(stored().assertion_expires)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(existsSync(`${credentialsFile()}.lock`)).toBe(false);
  });

  it('commands run at once refresh once, under the lock; a lock left by a process that died is taken over', async () => {
    const before = stored();
    const age = () =>
      editStored((entry) => {
        entry.assertion_expires = new Date(Date.now() - 1000).toISOString();
        delete entry.access_token;
      });
    age();
    const runs = await Promise.all([run(['token', '--verbose']), run(['token', '--verbose']), run(['token', '--verbose'])]);
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(runs.reduce((n, r) => n + count(r.stderr, 'POST /api/v1/agent/identity -> 200'), 0)).toBe(1);
    expect(stored().registration_id).toBe(before.registration_id);

    age();
    writeFileSync(`${credentialsFile()}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, at: new Date().toISOString() }));
    const afterCrash = await run(['token', '--verbose']);
    expect(afterCrash.code).toBe(0);
    expect(count(afterCrash.stderr, 'POST /api/v1/agent/identity -> 200')).toBe(1);
    expect(stored().registration_id).toBe(before.registration_id);
    expect(existsSync(`${credentialsFile()}.lock`)).toBe(false);
  });

  it('logout revokes the registration and its refresh tokens, says a later import is a new caller, and deletes the credentials', async () => {
    const { identity_assertion: assertion, refresh_token: refreshToken } = stored();
    const result = await run(['logout']);
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^revoked reg_\S+ and its refresh tokens; credentials deleted\n/) });
    expect(result.stdout).toContain('an import run again will be a new caller');
    const refreshed = await fetch(`${server.baseUrl}/api/v1/agent/identity`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'refresh', refresh_token: refreshToken }),
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { code: string }).code).toBe('invalid_refresh_token');
    expect(existsSync(credentialsFile())).toBe(false);
    const exchange = await fetch(`${server.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
    });
    expect(exchange.status).toBe(400);
    expect(((await exchange.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await run(['token'])).code).toBe(3);
    expect(await run(['logout'])).toMatchObject({ code: 0, stdout: expect.stringContaining('not registered') });
  });
});

describe('import', () => {
  const csv = [
    'nome,email,telefone,empresa,mensagem,origem',
    'Eva Import,eva@example.com,+55 11 98765-4321,Acme,hello,csv',
    'Bad Mail,not-an-email,,,,csv',
    '"Silva, Fábio",fabio@example.com,,"Empresa ""Entre Aspas""","line one',
    'line two, with comma",csv',
    'Too,few,columns',
    'Gil Import,gil@example.com,,,,',
  ].join('\r\n');

  it('stores each good row once, reports bad rows by number, and a rerun replays', async () => {
    const path = join(work, 'leads.csv');
    writeFileSync(path, csv);
    const before = await leadCount();
    const first = await run(['import', path]);
    expect(first.code).toBe(2);
    expect(first.stdout).toContain('row 1: ok\n');
    expect(first.stdout).toMatch(/row 2 \(line 3\): failed: validation_failed \(\/email: .+\)/);
    expect(first.stdout).toContain("3 stored, 0 already stored (replayed), 2 failed (CSV, delimiter ','; sent as anonymous)");
    expect(first.stdout).toContain('failed rows: 2, 4');
    expect(first.stdout).toContain('row 4 (line 6): expected 6 columns, found 3');
    expect(await leadCount()).toBe(before + 3);
    const quoted = await query("SELECT empresa, mensagem FROM leads WHERE email = 'fabio@example.com'");
    expect(quoted).toEqual([{ empresa: 'Empresa "Entre Aspas"', mensagem: 'line one\r\nline two, with comma' }]);

    const second = await run(['import', path]);
    expect(second.code).toBe(2);
    expect(second.stdout).toContain('row 1: ok (already stored)');
    expect(second.stdout).toContain('0 stored, 3 already stored (replayed), 2 failed');
    expect(second.stdout).toContain('failed rows: 2, 4');
    expect(await leadCount()).toBe(before + 3);
  });

  it('a rerun after the assertion expired stores nothing new: the registration is refreshed, not replaced', async () => {
    expect((await run(['register', '--name', 'Importer'])).code).toBe(0);
    const registrationId = stored().registration_id;
    const path = join(work, 'refresh.csv');
    writeFileSync(path, 'nome,email\nIvo Refresh,ivo.refresh@example.com\nJu Refresh,ju.refresh@example.com\n');
    const before = await leadCount();
    const first = await run(['import', path]);
    expect(first.stdout).toContain(`2 stored, 0 already stored (replayed), 0 failed (CSV, delimiter ','; sent as agent ${registrationId})`);
    expect(await leadCount()).toBe(before + 2);

    editStored((entry) => {
      entry.assertion_expires = new Date(Date.now() - 1000).toISOString();
      delete entry.access_token;
      delete entry.access_token_expires;
    });
    const second = await run(['import', path, '--verbose']);
    expect(second.code).toBe(0);
    expect(count(second.stderr, 'POST /api/v1/agent/identity -> 200')).toBe(1);
    expect(second.stdout).toContain(`0 stored, 2 already stored (replayed), 0 failed (CSV, delimiter ','; sent as agent ${registrationId})`);
    expect(await leadCount()).toBe(before + 2);
    expect(stored().registration_id).toBe(registrationId);
    expect((await run(['logout'])).code).toBe(0);
  });

  it('imports JSONL, with --json', async () => {
    const path = join(work, 'leads.jsonl');
    writeFileSync(path, '{"nome":"Hugo Jsonl","email":"hugo@example.com"}\n\n{broken\n');
    const result = await run(['import', path, '--json']);
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ stored: 1, replayed: 0, failed: 1, total: 2 });
    expect(summary.rows[1]).toMatchObject({ row: 2, line: 3, status: 'failed', reason: expect.stringContaining('invalid JSON') });
    expect((await run(['import', join(work, 'missing.csv')])).code).toBe(1);
  });

  it('fills context from CSV columns named like its members, and takes legal bases from JSON Lines', async () => {
    const csv = join(work, 'campanha.csv');
    writeFileSync(
      csv,
      'nome,email,origem,page_url,utm_source,utm_campaign,gclid\r\n' +
        'Rui Campanha,rui@example.com,campanha,https://exemplo.com.br/lp?utm_source=x#f,google,vr-2026,Cj0\r\n' +
        'Eva Campanha,eva@example.com,campanha,,,,\r\n',
    );
    expect((await run(['import', csv])).code).toBe(0);
    const jsonl = join(work, 'consentimento.jsonl');
    const consent = { category: 'communications', type: 'consent', status: 'granted' };
    writeFileSync(
      jsonl,
      `${JSON.stringify({ nome: 'Bia Consent', email: 'bia@example.com', origem: 'campanha', legal_bases: [consent], consent_text: 'Aceito.' })}\n`,
    );
    expect((await run(['import', jsonl])).code).toBe(0);
    const rows = (await query("SELECT nome, context, legal_bases FROM leads WHERE origem = 'campanha' ORDER BY nome")) as {
      nome: string;
      context: string | null;
      legal_bases: string | null;
    }[];
    expect(rows.map((row) => [row.nome, row.context === null ? null : JSON.parse(row.context)])).toEqual([
      ['Bia Consent', null],
      ['Eva Campanha', null],
      ['Rui Campanha', { page_url: 'https://exemplo.com.br/lp', utm_source: 'google', utm_campaign: 'vr-2026', gclid: 'Cj0' }],
    ]);
    expect(JSON.parse(rows[0].legal_bases!)).toEqual([expect.objectContaining({ ...consent, channel: 'cli', revoked_at: null })]);
  });

  it('a spreadsheet file: ";" from the header, a BOM, CRLF, quoted line breaks, delimiters and quotes', async () => {
    const path = join(work, 'planilha.csv');
    const rows = [
      'nome;email;empresa;mensagem;origem',
      'João Ponto;joao@example.com;"Acme; Filial";"primeira linha\r\nsegunda, com vírgula e ""aspas""";planilha',
      '',
      'Lia Ponto;lia@example.com;;sem aspas, com vírgula;planilha',
      'Sem Email;;;;planilha',
    ];
    writeFileSync(path, `\uFEFF${rows.join('\r\n')}\r\n`);
    const result = await run(['import', path]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('row 1: ok\nrow 2: ok\n');
    expect(result.stdout).toMatch(/row 3 \(line 6\): failed: validation_failed \(\/email: .+\)/);
    expect(result.stdout).toContain("2 stored, 0 already stored (replayed), 1 failed (CSV, delimiter ';'; sent as anonymous)");
    expect(await query("SELECT nome, empresa, mensagem, origem FROM leads WHERE origem = 'planilha' ORDER BY nome")).toEqual([
      { nome: 'João Ponto', empresa: 'Acme; Filial', mensagem: 'primeira linha\r\nsegunda, com vírgula e "aspas"', origem: 'planilha' },
      { nome: 'Lia Ponto', empresa: null, mensagem: 'sem aspas, com vírgula', origem: 'planilha' },
    ]);
  });

  it('rows that cannot be read are reported by row and line, and the others are sent', async () => {
    const path = join(work, 'unreadable.csv');
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from('nome,email\nLuz Ok,luz@example.com\nEl'),
        Buffer.from([0xe9]), // Latin-1 é: a spreadsheet's "CSV" that is not UTF-8
        Buffer.from('na,elena@example.com\n\nMel Ok,mel@example.com\n"Open,quote@example.com\nnever closed\n'),
      ]),
    );
    const result = await run(['import', path, '--json']);
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ stored: 2, replayed: 0, failed: 2, total: 4, format: 'csv', delimiter: ',', sent_as: 'anonymous' });
    expect(summary.rows).toEqual([
      { row: 1, line: 2, status: 'stored', id: expect.any(String) },
      { row: 2, line: 3, status: 'failed', reason: expect.stringContaining('not valid UTF-8') },
      { row: 3, line: 5, status: 'stored', id: expect.any(String) },
      { row: 4, line: 6, status: 'failed', reason: 'a quoted field is not closed before the end of the file' },
    ]);
    expect(await query("SELECT nome FROM leads WHERE email IN ('luz@example.com', 'mel@example.com', 'elena@example.com') ORDER BY nome")).toEqual([
      { nome: 'Luz Ok' },
      { nome: 'Mel Ok' },
    ]);
  });

  it('a header it cannot use stops before any row is sent', async () => {
    const path = join(work, 'bad-header.csv');
    writeFileSync(path, 'nome;e-mail\nAna;ana@example.com\n');
    const before = await leadCount();
    expect(await run(['import', path])).toMatchObject({ code: 2, stderr: expect.stringContaining('CSV: unknown column(s) e-mail') });
    writeFileSync(path, '');
    expect(await run(['import', path])).toMatchObject({ code: 2, stderr: expect.stringContaining('CSV: the file is empty') });
    expect(await leadCount()).toBe(before);
  });

  it('a record over 1 MiB (a quote left open) stops the import there, after the rows before it', async () => {
    const path = join(work, 'open-quote.csv');
    writeFileSync(path, `nome,email\nAna Antes,ana.antes@example.com\n"Aberta,aberta@example.com\n${'x'.repeat(1100 * 1024)}\nDepois,depois@example.com\n`);
    const result = await run(['import', path]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('row 1: ok\n1 stored, 0 already stored (replayed), 0 failed');
    expect(result.stderr).toBe('error: CSV: row 2 (line 3) is longer than 1048576 bytes (is a quote left open?); stopped there\n');
    expect(await query("SELECT nome FROM leads WHERE email IN ('ana.antes@example.com', 'depois@example.com')")).toEqual([{ nome: 'Ana Antes' }]);
  });

  it('--dry-run reads a 1,000,000-row file in flat memory (a 32 MB heap for a 100 MB file)', async () => {
    const path = join(work, 'million.csv');
    const file = createWriteStream(path);
    file.write('nome,email,mensagem\n');
    for (let i = 1; i < 1_000_000; i++) {
      if (!file.write(`Pessoa ${i},p${i}@example.com,"linha 1\nlinha 2, com ""aspas"""\n`)) await once(file, 'drain');
    }
    file.end('Última,sem-coluna\n');
    await once(file, 'close');
    const rss = join(work, 'max-rss.cjs');
    // What the CLI holds: the JS heap and the Buffers outside it, sampled every 10 ms. Not the RSS: that also counts the
    // malloc arenas of the threads reading the file, which grew with the machine's load (70 MB alone, 199 MB in a busy run).
    writeFileSync(
      rss,
      'let peak = 0;\n' +
        'const sample = () => { const m = process.memoryUsage(); peak = Math.max(peak, m.heapUsed + m.arrayBuffers); };\n' +
        'setInterval(sample, 10).unref();\n' +
        "process.on('exit', () => { sample(); process.stderr.write(`peak-held-kib ${Math.round(peak / 1024)}\\n`); });\n",
    );
    const result = await outputOf(
      spawn(process.execPath, ['--max-old-space-size=32', '--require', rss, leads, 'import', path, '--dry-run'], {
        env: { PATH: process.env.PATH, HOME: work, LEADS_CONFIG_DIR: configDir },
      }),
    );
    rmSync(path);
    expect(result.stdout).toBe(
      [
        // Each row spans two lines: the last one starts on line 2 + 2 × 999,999.
        'row 1000000 (line 2000000): failed: expected 3 columns, found 2',
        "dry run (CSV, delimiter ','): 999999 rows read, 1 cannot be read; nothing was sent",
        'failed rows: 1000000',
        '  row 1000000 (line 2000000): expected 3 columns, found 2',
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(2);
    // The file is over 100 MB: holding it, or the rows read from it, would be several times this.
    const held = Number(/peak-held-kib (\d+)/.exec(result.stderr)![1]);
    expect(held).toBeLessThan(48 * 1024);
  }, 300_000);
});

describe('import against a stand-in service', () => {
  let fake: Server | undefined;
  afterEach(() => fake?.close());

  /** A service answering POST /api/v1/lead after `delayMs`, counting the requests in flight. */
  async function standIn(delayMs: number, answer: 'receipt' | 'hang-up') {
    const seen = { requests: 0, inFlight: 0, maxInFlight: 0, keys: new Set<string>(), sameKeyTogether: 0 };
    const keysInFlight = new Set<string>();
    fake = createServer((req, res) => {
      const key = String(req.headers['idempotency-key']);
      seen.requests++;
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      if (keysInFlight.has(key)) seen.sameKeyTogether++;
      keysInFlight.add(key);
      seen.keys.add(key);
      req.resume();
      setTimeout(() => {
        seen.inFlight--;
        keysInFlight.delete(key);
        if (answer === 'hang-up') return req.socket.destroy();
        res
          .writeHead(201, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ id: `id-${seen.requests}`, received_at: new Date().toISOString(), status: 'received' }));
      }, delayMs);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => fake!.listen(port, '127.0.0.1', resolve));
    return { seen, baseUrl: `http://127.0.0.1:${port}` };
  }

  it('at most --concurrency rows are in flight, reported in file order; equal rows are never sent together', async () => {
    const { seen, baseUrl } = await standIn(30, 'receipt');
    const path = join(work, 'window.jsonl');
    // Rows 31 to 40 come in equal pairs.
    const n = (i: number) => (i < 30 ? i : 30 + Math.floor((i - 30) / 2));
    const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify({ nome: `Janela ${n(i)}`, email: `janela${n(i)}@example.com` }));
    writeFileSync(path, lines.join('\n'));
    const result = await run(['import', path, '--concurrency', '4', '--base-url', baseUrl]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 40)).toEqual(Array.from({ length: 40 }, (_, i) => `row ${i + 1}: ok`));
    expect(seen.requests).toBe(40);
    expect(seen.maxInFlight).toBe(4);
    // An equal pair has one key, never two of one key in flight at once.
    expect(seen.keys.size).toBe(35);
    expect(seen.sameKeyTogether).toBe(0);
    expect((await run(['import', path, '--concurrency', '65', '--base-url', baseUrl])).code).toBe(1);
  });

  it('when the service cannot be reached it stops, says which rows were not sent, and exits 5', async () => {
    const { seen, baseUrl } = await standIn(0, 'hang-up');
    const path = join(work, 'unreachable.csv');
    writeFileSync(path, ['nome,email', ...Array.from({ length: 50 }, (_, i) => `Nome ${i},n${i}@example.com`)].join('\n'));
    const result = await run(['import', path, '--concurrency', '2', '--base-url', baseUrl]);
    expect(result.code).toBe(5);
    expect(seen.requests).toBeLessThanOrEqual(3);
    expect(result.stdout).toMatch(/^row 1 \(line 2\): failed: cannot reach /);
    expect(result.stdout).toMatch(/stopped after row [23]: the service cannot be reached; later rows were not sent\n$/);
  });
});

describe('rate limits', () => {
  let limited: ServerProcess;
  let limitedDb: TestDatabase;
  let replay: Server | undefined;

  afterAll(async () => {
    replay?.close();
    if (limited) await stop(limited);
    await limitedDb?.drop();
  });

  it('waits Retry-After, retries three times, then exits 4', async () => {
    limitedDb = await freshDatabase();
    limited = await startServer({ ...GENEROUS_LIMITS, RATE_LIMIT_ANONYMOUS: '1/2s', LOG_LEVEL: 'warn', ...limitedDb.env });
    // The service's own 429, answered again to every request the client makes: racing the client for a real quota
    // that renews while it waits made the outcome depend on who asked first after each renewal.
    await fetch(`${limited.baseUrl}/api/v1/info`).then((r) => r.arrayBuffer());
    const refused = await fetch(`${limited.baseUrl}/api/v1/info`);
    expect(refused.status).toBe(429);
    const body = Buffer.from(await refused.arrayBuffer());
    const headers = Object.fromEntries([...refused.headers].filter(([name]) => !['connection', 'keep-alive', 'date', 'transfer-encoding'].includes(name)));
    expect(Number(headers['retry-after'])).toBeGreaterThan(0);
    const asked: string[] = [];
    replay = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(429, headers).end(body);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => replay!.listen(port, '127.0.0.1', resolve));

    const started = Date.now();
    const result = await run(['info', '--verbose', '--base-url', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(4);
    expect(asked).toEqual(Array(4).fill('GET /api/v1/info'));
    expect(count(result.stderr, 'GET /api/v1/info -> 429')).toBe(4);
    expect(count(result.stderr, 'rate limited: retrying in')).toBe(3);
    expect(result.stderr).toContain('error: rate_limited (HTTP 429)');
    // It waited as told between the attempts.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 1000 * Number(headers['retry-after']) - 100);
  });
});
