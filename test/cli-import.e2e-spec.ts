/** @system two built services and the CLI as processes */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { neutraliseFormula } from '../src/leads/csv-cells.js';
import { CONTEXT_MEMBERS } from '../src/leads/lead-context.js';
import { PT_BR_DEFAULT_COLUMNS, PT_BR_HEADERS } from '../src/leads/lead-export.headers.js';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { TestDatabase, freshDatabase } from './support/test-app.js';
import { type CliOptions, runCli } from './support/child-output.js';

// `leads import` of what `leads export` wrote (issue 31, defects 7 and 8): two built services as their own processes,
// leads exported from one in each profile and imported into the other, the stored leads compared; and `--dedupe email`
// against reruns by a new caller.

interface Client {
  client_id: string;
  client_secret: string;
}

interface StoredRow {
  nome: string;
  email: string;
  telefone: string | null;
  telefone_e164: string | null;
  empresa: string | null;
  mensagem: string | null;
  origem: string | null;
  context: unknown;
}

interface LeadView extends StoredRow {
  id: string;
  received_at: string;
  legal_bases: { category: string; type: string; status: string; recorded_at: string; revoked_at: string | null; consent_text_sha256: string | null }[];
  context: Record<string, string>;
}

let work: string;
let configDir: string;
let leads: string;
let sourceDb: TestDatabase;
let targetDb: TestDatabase;
let source: ServerProcess;
let target: ServerProcess;
let exporter: Client;
let importer: Client;

const run = (args: string[], options?: CliOptions) => runCli({ leads, home: work, configDir }, args, options);
const as = (client: Client) => ({ LEADS_CLIENT_ID: client.client_id, LEADS_CLIENT_SECRET: client.client_secret });
const onTarget = (args: string[], options?: CliOptions) => run([...args, '--base-url', target.baseUrl], options);

/**
 * Not execFileSync: a blocked event loop keeps undici from dropping an idle connection the server has closed after its
 * keep-alive timeout, and the next fetch fails with "other side closed" on a slow machine.
 */
async function createClient(server: ServerProcess, database: TestDatabase, name: string, scope: string): Promise<Client> {
  const { stdout } = await promisify(execFile)(process.execPath, ['dist/src/oauth/operator-clients.command.js', 'create', '--name', name, '--scope', scope], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, ...database.env },
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Client;
}

async function start(database: TestDatabase): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({ ...GENEROUS_LIMITS, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...database.env }, port);
}

/** The leads as a person would compare them: every field the import sends or the service derives from them. */
async function storedRows(database: TestDatabase, where = '1 = 1'): Promise<StoredRow[]> {
  const rows = await database.query<StoredRow>(
    `SELECT nome, email, telefone, telefone_e164, empresa, mensagem, origem, context FROM leads WHERE ${where} ORDER BY email, nome`,
  );
  return rows.map((row) => ({ ...row, context: typeof row.context === 'string' ? JSON.parse(row.context) : row.context }));
}

/** A new agent registration on the target (a new caller: its imports store every row again), and its id. */
async function registerOnTarget(): Promise<string> {
  const result = await onTarget(['register', '--json']);
  expect(result.code).toBe(0);
  const credentials = JSON.parse(readFileSync(join(configDir, 'credentials.json'), 'utf8')) as { servers: Record<string, { registration_id: string }> };
  return credentials.servers[target.baseUrl].registration_id;
}

async function exportFrom(args: string[], file: string): Promise<string> {
  const path = join(work, file);
  // Every verdict: João's message starts like a formula, so screening holds it, and a default export leaves it out.
  const result = await run(['export', '--screening', 'all', ...args, '--output', path, '--base-url', source.baseUrl], { env: as(exporter) });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return path;
}

/** `dd/mm/aaaa hh:mm:ss` in Brasília time, no offset: how the pt-BR profile writes a date-time. */
function brasilia(iso: string | null): string {
  if (iso === null) return '';
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: 'America/Sao_Paulo',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.day}/${parts.month}/${parts.year} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** A lead's cell in the pt-BR profile's column `member`, as the export writes it (formula-neutralised). */
function ptBrCell(lead: LeadView, member: string): string {
  const [category, basisMember] = member.startsWith('communications_')
    ? ['communications', member.slice('communications_'.length)]
    : member.startsWith('data_processing_')
      ? ['data_processing', member.slice('data_processing_'.length)]
      : [];
  let value: string | null;
  if (category) {
    const basis = lead.legal_bases.find((entry) => entry.category === category) as Record<string, string | null> | undefined;
    value = basis?.[basisMember!] ?? null;
    if (basisMember!.endsWith('_at')) value = brasilia(value);
  } else if (member === 'received_at') value = brasilia(lead.received_at);
  else if (member === 'consent_text_sha256') value = lead.legal_bases.find((entry) => entry.consent_text_sha256)?.consent_text_sha256 ?? null;
  else if ((CONTEXT_MEMBERS as readonly string[]).includes(member)) value = lead.context[member] ?? null;
  else value = (lead as unknown as Record<string, string | null>)[member];
  return neutraliseFormula(value ?? '');
}

/** The pt-BR profile exactly as specified: a BOM, `;`, CRLF, the Portuguese headers, local date-times without offset. */
function ptBrFile(views: LeadView[], columns: readonly string[]): string {
  const options = { delimiter: ';', record_delimiter: 'windows', quoted_match: /[\r\n]/ } as const;
  const header = columns.map((member) => PT_BR_HEADERS[member]);
  return `\uFEFF${stringify([header, ...views.map((lead) => columns.map((member) => ptBrCell(lead, member)))], options)}`;
}

const CONSENT = { category: 'communications', type: 'consent', status: 'granted' };
const SOURCE_LEADS = [
  {
    nome: 'João Ávila',
    email: 'Joao.Avila@Exemplo.com.br',
    telefone: '+55 (11) 98765-4321',
    empresa: 'Ávila & Filhos; Comércio, Ltda.',
    mensagem: '=SOMA(1;2) não é fórmula\r\nsegunda linha, com "aspas"; e ponto e vírgula',
    origem: 'site-contato',
    legal_bases: [CONSENT],
    consent_text: 'Aceito receber comunicações.',
    context: { page_url: 'https://exemplo.com.br/contato', utm_source: 'google', utm_campaign: 'vr-2026', gclid: 'Cj0KCQ' },
  },
  { nome: 'Bia Sem Extras', email: 'bia@exemplo.com.br' },
  { nome: 'Caio Traço', email: 'caio@exemplo.com.br', telefone: '11 3456-7890', empresa: '@Casa Ltda', mensagem: '-', origem: '+campanha' },
];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'leads-cli-import-'));
  configDir = join(work, 'config');
  leads = join(work, 'leads');
  [sourceDb, targetDb] = await Promise.all([freshDatabase(), freshDatabase()]);
  [source, target] = await Promise.all([start(sourceDb), start(targetDb)]);
  execFileSync('sh', ['-c', `curl -fsSL ${source.baseUrl}/cli/leads -o "${leads}" && chmod +x "${leads}"`]);
  exporter = await createClient(source, sourceDb, 'CLI export e2e', 'leads:read leads:export');
  importer = await createClient(target, targetDb, 'CLI import e2e', 'leads:read leads:write');
  for (const lead of SOURCE_LEADS) {
    const res = await fetch(`${source.baseUrl}/api/v1/lead`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lead) });
    expect(res.status).toBe(201);
  }
});

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  await Promise.all([sourceDb?.drop(), targetDb?.drop()]);
  rmSync(work, { recursive: true, force: true });
});

describe('an export imports again', () => {
  it("CSV, delimiter ',': the same leads, and one note naming the columns the service sets", async () => {
    const file = await exportFrom(['--format', 'csv'], 'export.csv');
    const registration = await registerOnTarget();
    const result = await onTarget(['import', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`3 stored, 0 already stored (replayed), 0 failed (CSV, delimiter ','; sent as agent ${registration})`);
    const note = result.stdout.split('\n').filter((line) => line.startsWith('ignored, not sent: '));
    expect(note).toEqual([
      expect.stringContaining('ignored, not sent: id, received_at, telefone_e164, channel, registration_id, client_id, communications_type'),
    ]);
    expect(note[0]).toContain('consent_text_sha256, screening_verdict, screening_reasons, screening_decided_by, screening_decided_at (');
    expect(await storedRows(targetDb, `registration_id = '${registration}'`)).toEqual(await storedRows(sourceDb));
  });

  it("CSV, delimiter ';' as the service exports it: a BOM, semicolons, its headers", async () => {
    const file = await exportFrom(['--format', 'csv', '--delimiter', ';'], 'planilha.csv');
    expect(readFileSync(file).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const registration = await registerOnTarget();
    const result = await onTarget(['import', file, '--json']);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ stored: 3, replayed: 0, failed: 0, format: 'csv', delimiter: ';' });
    expect(summary.ignored).toEqual(expect.arrayContaining([expect.stringMatching(/^(received_at|Recebido em)$/)]));
    // The pt-BR profile's default columns leave out the context: the six fields are compared.
    const six = (rows: StoredRow[]) => rows.map(({ context: _context, ...fields }) => fields);
    expect(six(await storedRows(targetDb, `registration_id = '${registration}'`))).toEqual(six(await storedRows(sourceDb)));
  });

  it('JSON Lines: lead fields and context; id, received_at, channel and the legal bases are named once and not sent', async () => {
    const file = await exportFrom(['--format', 'jsonl'], 'export.jsonl');
    const registration = await registerOnTarget();
    const result = await onTarget(['import', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`3 stored, 0 already stored (replayed), 0 failed (JSONL; sent as agent ${registration})`);
    const note = result.stdout.split('\n').filter((line) => line.startsWith('ignored, not sent: '));
    expect(note).toEqual([expect.stringMatching(/^ignored, not sent: id, received_at, telefone_e164, channel, screening, legal_bases \(/)]);
    expect(await storedRows(targetDb, `registration_id = '${registration}'`)).toEqual(await storedRows(sourceDb));
    expect(await targetDb.query(`SELECT legal_bases FROM leads WHERE registration_id = '${registration}' AND legal_bases IS NOT NULL`)).toEqual([]);
  });

  it('the pt-BR profile as specified: Portuguese headers, every column or the default ones, dd/mm/aaaa hh:mm:ss', async () => {
    const views = readFileSync(await exportFrom(['--format', 'jsonl'], 'views.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as LeadView);
    const all = join(work, 'pt-br-todas.csv');
    writeFileSync(all, ptBrFile(views, Object.keys(PT_BR_HEADERS)));
    expect(readFileSync(all, 'utf8')).toMatch(/^\uFEFFID;Recebido em;Nome;E-mail;.*\r\n.*;\d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d;/);
    expect(readFileSync(all, 'utf8')).toContain(";'+55 (11) 98765-4321;");

    let registration = await registerOnTarget();
    const result = await onTarget(['import', all]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("3 stored, 0 already stored (replayed), 0 failed (CSV, delimiter ';'");
    const note = result.stdout.split('\n').filter((line) => line.startsWith('ignored, not sent: '));
    expect(note).toEqual([
      expect.stringContaining('ignored, not sent: ID, Recebido em, Telefone (E.164), Canal, Registro do agente, Cliente operador, Comunicações: base legal'),
    ]);
    expect(await storedRows(targetDb, `registration_id = '${registration}'`)).toEqual(await storedRows(sourceDb));

    const defaults = join(work, 'pt-br.csv');
    writeFileSync(defaults, ptBrFile(views, PT_BR_DEFAULT_COLUMNS));
    registration = await registerOnTarget();
    const again = await onTarget(['import', defaults]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('3 stored');
    expect(again.stdout).toContain('ignored, not sent: Recebido em (');
    const withoutContext = (await storedRows(sourceDb)).map((row) => ({ ...row, context: null }));
    expect(await storedRows(targetDb, `registration_id = '${registration}'`)).toEqual(withoutContext);
  });

  it('a column that is neither a lead member nor an export column still stops the import before any row is sent', async () => {
    const path = join(work, 'typo.csv');
    writeFileSync(path, 'Nome;E-mail;Fone\r\nRui;rui@example.com;11 98765-4321\r\n');
    const result = await onTarget(['import', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CSV: unknown column(s) Fone;');
    expect(await targetDb.query("SELECT id FROM leads WHERE email = 'rui@example.com'")).toEqual([]);
  });
});

describe('import --dedupe email', () => {
  const file = () => join(work, 'dedupe.csv');
  const count = async () => Number((await targetDb.query<{ n: number }>("SELECT COUNT(*) AS n FROM leads WHERE origem = 'dedupe'"))[0].n);

  beforeAll(() => {
    writeFileSync(
      file(),
      [
        'nome,email,telefone,empresa,mensagem,origem',
        'Ana   Dedupe,ana.dedupe@Exemplo.COM,+55 11 98765-4321,  Acme  Ltda ,olá,dedupe',
        'Beto Dedupe,beto.dedupe@exemplo.com,,,,dedupe',
        'Cris Dedupe,cris.dedupe@exemplo.com,,,"duas\nlinhas",dedupe',
      ].join('\n'),
    );
  });

  it('--help says what a rerun does without it and with it', async () => {
    const help = (await run(['import', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('Usage: leads import <file.csv|file.jsonl> [--dedupe email]');
    expect(help).toContain('The same caller rerunning the file within 24 hours stores nothing new');
    expect(help).toContain('A different caller, or the same one after 24 hours, stores every row again: duplicates.');
    expect(help).toContain('A rerun with it stores only the rows no stored lead matches, whoever runs it and however long after');
    expect(help).toContain('with an agent registration or anonymously the import stops before sending anything');
  });

  it('a rerun by a new caller stores duplicates without it; with an agent identity it stops; an operator with it stores none', async () => {
    await registerOnTarget();
    expect((await onTarget(['import', file()])).code).toBe(0);
    expect(await count()).toBe(3);

    const registration = await registerOnTarget();
    const rerun = await onTarget(['import', file()]);
    expect(rerun.stdout).toContain(`3 stored, 0 already stored (replayed), 0 failed (CSV, delimiter ','; sent as agent ${registration})`);
    expect(await count()).toBe(6);

    const refused = await onTarget(['import', file(), '--dedupe', 'email']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`--dedupe email looks up stored leads (GET /api/v1/leads, scope leads:read), which needs an operator login`);
    expect(refused.stderr).toContain(`the agent registration ${registration} cannot read leads`);
    expect(refused.stderr).toContain('Nothing was sent.');
    expect(refused.stdout).toBe('');
    expect(await count()).toBe(6);

    const deduped = await onTarget(['import', file(), '--dedupe', 'email'], { env: as(importer) });
    expect(deduped.code).toBe(0);
    expect(deduped.stdout).toMatch(/^row 1: skipped \(lead [0-9a-f-]{36} has the same fields\)$/m);
    expect(deduped.stdout).toContain(
      `0 stored, 0 already stored (replayed), 3 skipped (a stored lead has the same address and fields), 0 failed (CSV, delimiter ','; sent as operator ${importer.client_id})`,
    );
    expect(await count()).toBe(6);
  });

  it('only the rows no stored lead matches are sent; --json and --dry-run count the skipped ones', async () => {
    const changed = join(work, 'dedupe-changed.csv');
    writeFileSync(
      changed,
      readFileSync(file(), 'utf8').replace('Beto Dedupe,beto.dedupe@exemplo.com,,,,dedupe', 'Beto Dedupe,beto.dedupe@exemplo.com,,,nova mensagem,dedupe'),
    );
    const dry = await onTarget(['import', changed, '--dedupe', 'email', '--dry-run'], { env: as(importer) });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      "dry run (CSV, delimiter ','): 1 rows read, 2 skipped (a stored lead has the same address and fields), 0 cannot be read; nothing was sent",
    );
    expect(await count()).toBe(6);

    const result = await onTarget(['import', changed, '--dedupe', 'email', '--json'], { env: as(importer) });
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ stored: 1, replayed: 0, skipped: 2, failed: 0, total: 3 });
    expect(summary.rows.map((row: { status: string }) => row.status)).toEqual(['skipped', 'stored', 'skipped']);
    expect(await count()).toBe(7);
    expect(await targetDb.query("SELECT mensagem FROM leads WHERE email = 'beto.dedupe@exemplo.com' AND mensagem IS NOT NULL")).toEqual([
      { mensagem: 'nova mensagem' },
    ]);
    expect((await onTarget(['import', changed, '--dedupe', 'name'])).code).toBe(1);
  });
});
