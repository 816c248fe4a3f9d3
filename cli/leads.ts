// The `leads` command-line client: one file, bundled by esbuild (csv-parse included), no runtime dependencies, Node.js 18 or newer.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Parsed, UsageError, allowOnly, intOption, parseArgs } from './args.js';
import { CredentialStore, configDir } from './credentials.js';
import { exportTo, formatBytes } from './export.js';
import { CliError, EXIT, Http, HttpResponse, asProblem, describeFailure, ensureOk, failure } from './http.js';
import { CONTEXT_MEMBERS } from '../src/leads/lead-context.js';
import { LEAD_FIELD_NAMES, REQUIRED_LEAD_FIELDS } from '../src/leads/lead-rules.js';
import { ImportReport, ImportRow, RowOutcome, findStoredLead, openRows, sendRows } from './import.js';
import { LeadRow, formatTable } from './list.js';
import { OperatorLogin, notLoggedIn, readSecret } from './login.js';
import { Session } from './session.js';
import { VERSION } from './version.js';
import { SUBJECT_HELP, subject } from './subject.js';
import { NOTIFY_HELP, notify } from './notify.js';
import { WEBHOOKS_HELP, webhooks } from './webhooks.js';

/** Replaced by the service with its PUBLIC_BASE_URL when it serves this file at /cli/leads. */
const DEFAULT_BASE_URL: string = '__LEADS_BASE_URL__';

const GLOBAL_HELP = `leads ${VERSION}: command-line client for the Leads API

Usage: leads <command> [options]

Commands:
  health                 service health
  info                   company information and links
  submit                 send a lead (stored)
  sandbox                validate a lead without storing it
  register               register this client (anonymous, --email, or --claim <owner's e-mail>) and store
                         its credentials
  token                  print a current access token
  graphql <query>        run a read-only GraphQL query
  import <file>          send every row of a .csv or .jsonl file, once
  login                  log in as an operator client (OAuth client credentials) to list, export and import leads
  list                   list stored leads, newest first (operator, leads:read)
  release <id>           release a held (or spam) lead: accepted, delivered to webhooks (operator, leads:screen)
  spam <id>              mark a lead spam: kept out of lists and webhooks, erased after SPAM_RETENTION_DAYS
                         (operator, leads:screen)
  export                 download stored leads as CSV or JSON Lines (operator, leads:export)
  webhooks <command>     signed webhooks of stored leads (operator, webhooks:manage): add, list, test,
                         deliveries, rotate, disable, enable, replay, remove (leads webhooks --help)
  notify <command>       e-mail to the team of each new lead or a daily digest (operator,
                         notifications:manage): add, list, test, remove (leads notify --help)
  subject <command> <email>
                         data-subject requests (operator): access (leads:read), erase, revoke (leads:erase);
                         list: the queue of requests with due dates (leads:read) (leads subject --help)
  logout                 forget the operator login; revoke the stored registration and delete its credentials

Global options:
  --base-url <url>       the service (env LEADS_BASE_URL; default ${DEFAULT_BASE_URL.startsWith('__') ? 'none: set one' : DEFAULT_BASE_URL})
  --json                 print the raw JSON response
  --verbose              log each HTTP request and token renewal on stderr
  --help, -h             help (also after a command: leads submit --help)
  --version              print the version

Exit codes: 0 ok, 1 usage, 2 invalid input, 3 auth, 4 rate limited, 5 server or network
(webhooks test: 6 the delivery failed, 7 no attempt in time).
Credentials: ${'$'}LEADS_CONFIG_DIR, else ${'$'}XDG_CONFIG_HOME/leads-cli, else ~/.config/leads-cli (credentials.json, mode 0600).
Operator: LEADS_CLIENT_SECRET renews an expired login; LEADS_CLIENT_ID with LEADS_CLIENT_SECRET stand in for a login.`;

const FILTER_HELP = `Filters: --since <date or RFC 3339 time> --until <date or RFC 3339 time> (on received_at; a date such as
2026-11-27 is a day in the service's time zone: --since from its 00:00, --until through its end),
--origem <text>, --email <address> (exact, any case), --screening accepted|held|spam|all (the screening verdict:
accepted, the default, is what reaches people; held leads wait for review), --channel api|form|mcp|cli,
--q <words> (search by name, e-mail or empresa: every word starts a word of the lead's, accents and case aside,
so --q joao finds João).`;

const LEAD_INPUT_HELP = `Input: ${LEAD_FIELD_NAMES.map((name) => `--${name}`).join(' ')}, or a JSON object from --file <path>
(--file - or piped stdin reads standard input). Flags override the fields of the JSON object.`;

const HELP: Record<string, string> = {
  health: 'Usage: leads health [--json]\n\nGET /api/v1/health: status, version and checks. Exit 5 when the service is down.',
  info: 'Usage: leads info [--json]\n\nGET /api/v1/info: brand, company, contact details and links.',
  submit: `Usage: leads submit [fields | --file <path>] [--json]\n\nPOST /api/v1/lead: validates and stores a lead (with an Idempotency-Key, so retries never duplicate).\n${LEAD_INPUT_HELP}`,
  sandbox: `Usage: leads sandbox [fields | --file <path>] [--json]\n\nPOST /api/v1/sandbox: the same validation as submit; nothing is stored.\n${LEAD_INPUT_HELP}`,
  register:
    'Usage: leads register [--email <address> | --claim <address>] [--name <client name>] [--json]\n\nPOST /api/v1/agent/identity: anonymous, or an identity assertion with a verified_email claim.\nStores the registration, its assertion and an access token; later commands send the token (agent quota).\n--claim <address> registers for its owner (service_auth): it shows the user code and the page where the\nowner types it with the code e-mailed to <address>, and waits for the confirmation; the claimed client\ngets the verified_agent quota.',
  token:
    'Usage: leads token [--json]\n\nPrints a current access token: the stored one, renewed from the assertion within 60 s of expiry; an\nexpired assertion is refreshed with the stored refresh token (the same registration). Needs `leads register`\nfirst (exit 3 otherwise).',
  graphql: 'Usage: leads graphql <query> [--variables <json>] [--json]\n\nPOST /api/v1/graphql; prints `data` as JSON. Exit 2 when the answer has errors.',
  import: `Usage: leads import <file.csv|file.jsonl> [--dedupe email] [--concurrency N] [--dry-run] [--json]

Sends each row to POST /api/v1/lead with Idempotency-Key import-<sha256 of the row's fields>. With an operator
login (leads login, needs leads:write) rows are sent as that client, at the operator rate limit; otherwise with
the agent registration (leads register), or anonymously.
A rerun without --dedupe: the service keeps each key for 24 hours, per caller. The same caller rerunning the file
within 24 hours stores nothing new (its rows are reported "already stored"). A different caller, or the same one
after 24 hours, stores every row again: duplicates. The same caller is the same operator login, or the same agent
registration (kept across assertion expiry: the CLI refreshes it, never registers anew while it can be renewed),
or no registration from the same address; leads logout, leads register, another machine or an operator login
instead of an agent (or the other way round) make a new caller.
--dedupe email: before a row is sent, the stored leads with its e-mail address (any letter case) are looked up
(GET /api/v1/leads?email=, one lookup per row); the row is skipped when one has the same nome, email, telefone,
empresa, mensagem and origem, compared as the service stores them (trimmed, NFC, inner spaces collapsed in nome and
empresa, the address's domain in lower case; a field left out matches an empty one; context and legal bases are
not compared). A rerun with it stores only the rows no stored lead matches, whoever runs it and however long after;
skipped rows are counted in the summary. It needs an operator login with leads:read (and leads:write to send);
with an agent registration or anonymously the import stops before sending anything.
The file is read as it is sent, in constant memory; at most --concurrency rows (default 8, at most 64) are in
flight, and rows are reported in file order. --dry-run reads the whole file and reports the rows that cannot be
read, sending nothing (with --dedupe, also the rows it would skip).
CSV: UTF-8 (a byte order mark is fine); a header naming the columns among
${LEAD_FIELD_NAMES.join(', ')}, and the context members
${CONTEXT_MEMBERS.join(', ')};
the delimiter is , or ; (whichever the header uses); RFC 4180 quoting (quoted fields may hold the delimiter, line
breaks and "" for a quote); CRLF or LF line ends.
JSONL: one JSON object per line, a lead as POST /api/v1/lead takes it.
An export imports again (leads export, GET /api/v1/leads/export): CSV with , and member names, CSV with ; (a byte
order mark, Portuguese headers such as Nome and E-mail, dates as dd/mm/aaaa hh:mm:ss), and JSON Lines. The columns
the service sets (id, received_at, telefone_e164, channel, registration_id, client_id) and the legal bases (their
evidence, when and how consent was given, cannot be restated: sent again they would be recorded as given now) are
read and not sent, named in one note; a cell the export prefixed with ' against spreadsheet formulas is read
without it. Any other unknown column stops the import before a row is sent.
Rows are numbered from 1 (CSV: records after the header; JSONL: non-blank lines); failures name the row and the
line of the file where it starts. A row that cannot be read (wrong column count, a quote left open, not UTF-8,
bad JSON) is reported and the others go on; a record longer than 1 MiB stops the import there.
Exit 2 if any row failed validation or could not be read (3 auth, 4 rate limited, 5 service unreachable: the
import stops, saying which rows were not sent).`,
  login: `Usage: leads login --client-id <id> [--scope "<scopes>"] [--save-secret] [--json]

Logs in as an operator client (created by the service's operator with npm run clients:create): gets an
access token by the OAuth client-credentials grant (client_secret_basic) and stores the login in the
credentials file (mode 0600). The secret is never a flag: it comes from LEADS_CLIENT_SECRET, or standard
input (typed without echo on a terminal; else its first line). --scope asks for fewer scopes than the client's.
The access token expires (15 minutes). The secret is stored only with --save-secret, and then renews the
token on its own; otherwise set LEADS_CLIENT_SECRET to renew it, or log in again (exit 3 says so).
LEADS_CLIENT_ID and LEADS_CLIENT_SECRET together work without a login: nothing is stored.
While logged in, list, export, import, webhooks and notify act as this client. leads logout forgets the login.`,
  list: `Usage: leads list [--limit N] [--cursor <cursor>] [filters] [--all] [--json]

GET /api/v1/leads (operator login with leads:read): stored leads, newest first. --limit: 1 to 200 (default
50), the page size with --all. On a terminal: a table of the columns that fit, long values cut, and the
command for the next page; otherwise (or with --json) the JSON answer {"data": [...], "next_cursor"}.
--all follows next_cursor to the end and prints one JSON document (or one table), streamed page by page.
When leads wait for review (held_count of the answer, under the same filters but --screening), says
"N leads awaiting review" on stderr, so that standard output stays the table or the JSON; list them with
--screening held, and release each with leads release <id> or leads spam <id>.
${FILTER_HELP}`,
  release: `Usage: leads release <id> [--json]

POST /api/v1/leads/{id}/screening {"verdict": "accepted"} (operator login with leads:screen): releases a held or
spam lead. It is then listed and exported with the accepted leads, and the first time a lead is accepted its
lead.received goes to the webhook endpoints (once, however often it is released). Prints the lead's screening;
with --json, or when stdout is not a terminal, the lead as the service answers it.`,
  spam: `Usage: leads spam <id> [--json]

POST /api/v1/leads/{id}/screening {"verdict": "spam"} (operator login with leads:screen): marks a lead spam. It
is kept out of lists, exports and webhooks (leads list --screening spam shows it) and erased SPAM_RETENTION_DAYS
after it arrived. leads release <id> undoes it. Prints the lead's screening; with --json, or when stdout is not a
terminal, the lead as the service answers it.`,
  export: `Usage: leads export --format csv|jsonl [--delimiter ';'] [--columns <names>] [--output FILE] [filters]

GET /api/v1/leads/export (operator login with leads:export): every stored lead matching the filters,
streamed as it arrives (never held whole in memory). CSV per RFC 4180 with a header row: every column
under its member name; --delimiter ';' gives the spreadsheet profile of pt-BR locales (semicolons, UTF-8
byte order mark, Portuguese headers, date-times dd/mm/aaaa hh:mm:ss in the service's time zone, and the
columns received_at,nome,email,telefone,empresa,mensagem,origem). --columns (CSV only) names the columns,
comma-separated, in order (all for every one). JSONL: one whole lead per line.
--output FILE writes to a temporary file beside FILE (mode 0600: it holds personal data), renamed to FILE
when the export is complete: a failed or interrupted export leaves no partial file. Without --output the
data goes to standard output. A progress line (rows, bytes) is shown on stderr when it is a terminal.
${FILTER_HELP}`,
  logout:
    'Usage: leads logout [--json]\n\nForgets the operator login (its access token expires on its own within 15 minutes), revokes the stored\nagent registration with its refresh tokens (by its refresh token, at /oauth2/revoke) and deletes the\ncredentials. A later command registers a new identity: an import run again after it is a new caller, and\nstores again the rows it sent before.',
  webhooks: WEBHOOKS_HELP,
  notify: NOTIFY_HELP,
  subject: SUBJECT_HELP,
};

interface Context {
  parsed: Parsed;
  json: boolean;
  http: Http;
  session: Session;
  operator: OperatorLogin;
  out: (text: string) => void;
}

/** The filters list and export share, as query parameters. */
function filterQuery(parsed: Parsed, names: string[]): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of names) if (parsed.options[name] !== undefined) query.set(name, parsed.options[name]);
  return query;
}
const FILTERS = ['since', 'until', 'origem', 'email', 'screening', 'channel', 'q'];
/** The most held leads the service counts in held_count (HELD_COUNT_CAP): that many means that many or more. */
const HELD_COUNT_CAP = 1000;

/** "N leads awaiting review", on stderr so that standard output stays the table or the JSON; nothing when none wait. */
function awaitingReview(heldCount: number | undefined): void {
  if (!heldCount) return;
  const count = heldCount >= HELD_COUNT_CAP ? `${heldCount} or more` : String(heldCount);
  process.stderr.write(`${count} lead${heldCount === 1 ? '' : 's'} awaiting review (leads list --screening held)\n`);
}

/** `leads release <id>` and `leads spam <id>`: a person's verdict on a lead. */
async function decide(ctx: Context, verdict: 'accepted' | 'spam'): Promise<number> {
  allowOnly(ctx.parsed, [], 1);
  const id = ctx.parsed.positionals[0];
  if (!id) throw new UsageError(`${ctx.parsed.command} needs the lead's id: leads ${ctx.parsed.command} 019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21`);
  const operator = requireLogin(ctx);
  const response = await operator.request(`/api/v1/leads/${encodeURIComponent(id)}/screening`, { json: { verdict } });
  if (response.status === 403 && asProblem(response)?.code === 'insufficient_scope') {
    const clientId = operator.current()?.client_id ?? '<id>';
    throw new CliError(
      `${describeFailure(response)}\nthe operator login ${clientId} cannot review leads: log in with a client that has the leads:screen scope`,
      EXIT.auth,
      response,
    );
  }
  // An id no lead has is the caller's input, not the service's failure.
  if (response.status === 404) throw new CliError(describeFailure(response), EXIT.invalid, response);
  const lead = ensureOk(response).body as { id: string; screening: { verdict: string; reasons: string[]; decided_by: string; decided_at: string } };
  if (ctx.json || process.stdout.isTTY !== true) ctx.out(JSON.stringify(lead, null, 2));
  else {
    const { screening } = lead;
    const reasons = screening.reasons.length ? ` (reasons: ${screening.reasons.join(', ')})` : '';
    ctx.out(
      `${verdict === 'accepted' ? 'released' : 'marked spam'} ${lead.id}: ${screening.verdict}${reasons}, by ${screening.decided_by} at ${screening.decided_at}`,
    );
  }
  return EXIT.ok;
}

/** Calls that need the operator login fail early, and clearly, without one. */
function requireLogin(ctx: Context): OperatorLogin {
  if (!ctx.operator.current()) throw notLoggedIn();
  return ctx.operator;
}

function resolveBaseUrl(parsed: Parsed): string {
  const raw = parsed.options['base-url'] ?? process.env.LEADS_BASE_URL ?? (DEFAULT_BASE_URL.startsWith('__') ? undefined : DEFAULT_BASE_URL);
  if (!raw) throw new UsageError('no service address: pass --base-url <url> or set LEADS_BASE_URL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--base-url: "${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--base-url: "${raw}" is not an http(s) URL`);
  // The lookbehind starts the match only at a run's first slash: linear where /\/+$/ is quadratic.
  return url.origin + url.pathname.replace(/(?<!\/)\/+$/, '');
}

function printJson(ctx: Context, response: HttpResponse): void {
  ctx.out(response.body !== undefined ? JSON.stringify(response.body, null, 2) : response.text);
}

/** Flattens an object into `key: value` lines (nested keys joined with dots). */
function describe(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [`${prefix}: ${String(value)}`];
  const lines: string[] = [];
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (Array.isArray(inner)) lines.push(`${name}: ${inner.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ')}`);
    else lines.push(...describe(inner, name));
  }
  return lines;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function leadInput(parsed: Parsed): Promise<Record<string, unknown>> {
  allowOnly(parsed, [...LEAD_FIELD_NAMES, 'file'], 0);
  const flags: Record<string, string> = {};
  for (const field of LEAD_FIELD_NAMES) if (parsed.options[field] !== undefined) flags[field] = parsed.options[field];
  let text: string | undefined;
  const file = parsed.options.file;
  if (file === '-' || (file === undefined && Object.keys(flags).length === 0 && !process.stdin.isTTY)) {
    text = await readStdin();
    if (file === undefined && text.trim() === '') text = undefined;
  } else if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  let base: Record<string, unknown> = {};
  if (text !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new CliError(`the input is not valid JSON: ${(error as Error).message}`, EXIT.invalid);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new CliError('the input must be a JSON object', EXIT.invalid);
    base = value as Record<string, unknown>;
  }
  const lead = { ...base, ...flags };
  if (Object.keys(lead).length === 0)
    throw new UsageError(`no lead given: pass ${REQUIRED_LEAD_FIELDS.map((name) => `--${name}`).join(' and ')} (and more), --file <path>, or JSON on stdin`);
  return lead;
}

const commands: Record<string, (ctx: Context) => Promise<number>> = {
  async health(ctx) {
    allowOnly(ctx.parsed, [], 0);
    const response = await ctx.http.request('/api/v1/health');
    if (ctx.json) printJson(ctx, response);
    ensureOk(response);
    if (!ctx.json) {
      const report = response.body as { status: string; version: string; checks?: Record<string, unknown> };
      const checks = Object.entries(report.checks ?? {}).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
      ctx.out(`${report.status} (version ${report.version})${checks.length ? `: ${checks.join(', ')}` : ''}`);
    }
    return EXIT.ok;
  },

  async info(ctx) {
    allowOnly(ctx.parsed, [], 0);
    const response = await ctx.session.request('/api/v1/info');
    if (ctx.json) printJson(ctx, response);
    ensureOk(response);
    if (!ctx.json) ctx.out(describe(response.body).join('\n'));
    return EXIT.ok;
  },

  async submit(ctx) {
    const lead = await leadInput(ctx.parsed);
    const response = await ctx.session.request('/api/v1/lead', { json: lead, headers: { 'Idempotency-Key': `cli-${randomUUID()}` } });
    if (ctx.json) printJson(ctx, response);
    ensureOk(response);
    const receipt = response.body as { id: string; received_at: string };
    if (!ctx.json) ctx.out(`stored: lead ${receipt.id} received at ${receipt.received_at}`);
    return EXIT.ok;
  },

  async sandbox(ctx) {
    const lead = await leadInput(ctx.parsed);
    const response = await ctx.session.request('/api/v1/sandbox', { json: lead });
    if (ctx.json) printJson(ctx, response);
    ensureOk(response);
    if (!ctx.json) {
      const result = response.body as { lead?: Record<string, unknown> };
      ctx.out(['valid (nothing stored); normalised lead:', ...describe(result.lead ?? {}).map((l) => `  ${l}`)].join('\n'));
    }
    return EXIT.ok;
  },

  async register(ctx) {
    allowOnly(ctx.parsed, ['email', 'name', 'claim'], 0);
    const { email, name, claim } = ctx.parsed.options;
    if (claim !== undefined && email !== undefined) throw new UsageError('--claim registers for the address it names: leave out --email');
    const { identity, response } = await ctx.session.register({ email, name, claim });
    await ctx.session.bearer(true);
    if (claim !== undefined && identity.claim_attempt && identity.claim_token) {
      // The owner reads these on the terminal; the JSON answer (with --json) comes once the claim is done.
      const attempt = identity.claim_attempt;
      process.stderr.write(
        `To confirm that this client acts for ${claim}, open ${attempt.verification_uri}\n` +
          `and type the code ${attempt.user_code} with the code e-mailed to ${claim} (valid ${Math.round(attempt.expires_in / 60)} minutes).\n` +
          'Waiting for the confirmation…\n',
      );
      const claimed = await ctx.session.awaitClaim(identity.claim_token, attempt);
      if (ctx.json) ctx.out(JSON.stringify({ ...(response.body as object), ...claimed, claimed: true }, null, 2));
      else ctx.out(`registered ${identity.registration_id} and claimed for ${claim}; assertion valid until ${claimed.assertion_expires}`);
      return EXIT.ok;
    }
    if (ctx.json) printJson(ctx, response);
    else {
      ctx.out(`registered ${identity.registration_id} (${identity.registration_type}); assertion valid until ${identity.assertion_expires}`);
      ctx.out(`credentials saved in ${ctx.session.store.file}`);
    }
    return EXIT.ok;
  },

  async token(ctx) {
    allowOnly(ctx.parsed, [], 0);
    if (!ctx.session.registration) throw new CliError('error: not registered with this service; run `leads register` first', EXIT.auth);
    const token = await ctx.session.bearer();
    const stored = ctx.session.registration!;
    if (ctx.json)
      ctx.out(
        JSON.stringify(
          { access_token: token, token_type: 'Bearer', expires_at: stored.access_token_expires, registration_id: stored.registration_id },
          null,
          2,
        ),
      );
    else ctx.out(token!);
    return EXIT.ok;
  },

  async graphql(ctx) {
    allowOnly(ctx.parsed, ['variables'], 1);
    const query = ctx.parsed.positionals[0];
    if (!query) throw new UsageError('graphql needs a query, e.g. leads graphql "{ health { status } }"');
    let variables: unknown;
    if (ctx.parsed.options.variables !== undefined) {
      try {
        variables = JSON.parse(ctx.parsed.options.variables);
      } catch {
        throw new UsageError('--variables must be a JSON object');
      }
      if (!variables || typeof variables !== 'object' || Array.isArray(variables)) throw new UsageError('--variables must be a JSON object');
    }
    const response = await ctx.session.request('/api/v1/graphql', { json: variables === undefined ? { query } : { query, variables } });
    if (ctx.json) printJson(ctx, response);
    ensureOk(response);
    const result = response.body as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
    if (!ctx.json && result.data !== undefined && result.data !== null) ctx.out(JSON.stringify(result.data, null, 2));
    if (result.errors?.length) {
      for (const error of result.errors) process.stderr.write(`error: ${error.extensions?.code ?? 'GRAPHQL_ERROR'}: ${error.message}\n`);
      return EXIT.invalid;
    }
    return EXIT.ok;
  },

  async import(ctx) {
    allowOnly(ctx.parsed, ['concurrency', 'dry-run', 'dedupe'], 1);
    const file = ctx.parsed.positionals[0];
    if (!file) throw new UsageError('import needs a file: leads import leads.csv');
    const concurrency = intOption(ctx.parsed, 'concurrency', 1, 64, 8)!;
    const dryRun = ctx.parsed.switches.has('dry-run');
    const dedupe = ctx.parsed.options.dedupe;
    if (dedupe !== undefined && dedupe !== 'email') throw new UsageError(`--dedupe takes one value: email (not "${dedupe}")`);
    const source = openRows(file);
    let existing: ((fields: Record<string, unknown>) => Promise<string | undefined>) | undefined;
    if (dedupe) {
      // Reading stored leads is an operator's right: an agent or anonymous caller would store every row again unseen.
      if (!ctx.operator.current()) {
        const registration = ctx.session.registration;
        throw new CliError(
          `error: --dedupe email looks up stored leads (GET /api/v1/leads, scope leads:read), which needs an operator login; ` +
            `${registration ? `the agent registration ${registration.registration_id}` : 'an anonymous caller'} cannot read leads. ` +
            'Log in with `leads login --client-id <id>` (a client with leads:read and leads:write), or leave out --dedupe. Nothing was sent.',
          EXIT.auth,
        );
      }
      await ctx.operator.requireScope('leads:read');
      existing = (fields) => findStoredLead(fields, (path) => ctx.operator.request(path));
    }
    let sentAs: string | undefined;
    let send: ((fields: Record<string, unknown>, key: string) => Promise<HttpResponse>) | undefined;
    if (!dryRun && ctx.operator.current()) {
      await ctx.operator.requireScope('leads:write');
      sentAs = `operator ${ctx.operator.current()!.client_id}`;
      send = (fields, key) => ctx.operator.request('/api/v1/lead', { json: fields, headers: { 'Idempotency-Key': key } });
    } else if (!dryRun) {
      const registration = ctx.session.registration;
      sentAs = registration ? `agent ${registration.registration_id}` : 'anonymous';
      send = (fields, key) => ctx.session.request('/api/v1/lead', { json: fields, headers: { 'Idempotency-Key': key } });
    }
    const report = new ImportReport(ctx.json ? 'json' : process.stdout.isTTY ? 'tty' : 'lines', source, sentAs, existing !== undefined);
    let stopped = false;
    try {
      if (send) stopped = (await sendRows(source.rows, send, concurrency, (outcome) => report.add(outcome), existing)).stopped;
      else for await (const row of source.rows) await report.add(await dryRunOutcome(row, existing));
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      const code = await report.finish(false, error);
      process.stderr.write(`${error.message.startsWith('error') ? '' : 'error: '}${error.message}\n`);
      return code;
    }
    return report.finish(stopped);
  },

  async login(ctx) {
    allowOnly(ctx.parsed, ['client-id', 'scope', 'save-secret'], 0);
    const clientId = ctx.parsed.options['client-id'];
    if (!clientId) throw new UsageError('login needs --client-id <id> (the secret comes from LEADS_CLIENT_SECRET or standard input)');
    const secret = await readSecret(process.env);
    if (!secret) throw new UsageError('no client secret: set LEADS_CLIENT_SECRET or give it on standard input');
    const login = await ctx.operator.login(clientId, secret, { saveSecret: ctx.parsed.switches.has('save-secret'), scope: ctx.parsed.options.scope });
    ctx.operator.save(login);
    if (ctx.json) {
      ctx.out(
        JSON.stringify(
          { client_id: login.client_id, scope: login.scope, access_token_expires: login.access_token_expires, secret_saved: login.client_secret !== undefined },
          null,
          2,
        ),
      );
    } else {
      ctx.out(`logged in as ${login.client_id} (scopes: ${login.scope || 'none'}); access token valid until ${login.access_token_expires}`);
      ctx.out(
        login.client_secret !== undefined
          ? `login and secret saved in ${ctx.operator.store.file}; the token is renewed from it`
          : `login saved in ${ctx.operator.store.file} (not the secret): log in again when it expires, or set LEADS_CLIENT_SECRET`,
      );
    }
    return EXIT.ok;
  },

  async list(ctx) {
    allowOnly(ctx.parsed, ['limit', 'cursor', 'all', ...FILTERS], 0);
    const operator = requireLogin(ctx);
    const query = filterQuery(ctx.parsed, ['limit', 'cursor', ...FILTERS]);
    const table = !ctx.json && process.stdout.isTTY === true;
    const all = ctx.parsed.switches.has('all');
    const page = async () => {
      const response = ensureOk(await operator.request(`/api/v1/leads?${query}`));
      return response.body as { data: LeadRow[]; next_cursor: string | null; held_count?: number };
    };
    const width = process.stdout.columns || 120;
    if (!all) {
      const body = await page();
      if (!table) ctx.out(JSON.stringify(body, null, 2));
      else {
        ctx.out(body.data.length ? formatTable(body.data, width).join('\n') : 'no leads');
        if (body.next_cursor)
          process.stderr.write(
            `more: leads list --cursor ${body.next_cursor}${query.has('limit') ? ` --limit ${query.get('limit')}` : ''} (and the same filters)\n`,
          );
      }
      awaitingReview(body.held_count);
      return EXIT.ok;
    }
    // Page by page, so that memory stays flat however many leads there are.
    let count = 0;
    let heldCount: number | undefined;
    if (!table) process.stdout.write('{"data":[');
    for (;;) {
      const body = await page();
      if (table) {
        if (body.data.length || count === 0)
          ctx.out(
            formatTable(body.data, width)
              .slice(count === 0 ? 0 : 2)
              .join('\n'),
          );
      } else {
        for (const [i, lead] of body.data.entries()) process.stdout.write(`${count + i === 0 ? '\n' : ',\n'}${JSON.stringify(lead)}`);
      }
      count += body.data.length;
      heldCount ??= body.held_count;
      if (!body.next_cursor) break;
      query.set('cursor', body.next_cursor);
    }
    if (!table) ctx.out(`${count ? '\n' : ''}],"next_cursor":null}`);
    else process.stderr.write(`${count} leads\n`);
    awaitingReview(heldCount);
    return EXIT.ok;
  },

  release: (ctx) => decide(ctx, 'accepted'),
  spam: (ctx) => decide(ctx, 'spam'),

  async export(ctx) {
    allowOnly(ctx.parsed, ['format', 'delimiter', 'columns', 'output', ...FILTERS], 0);
    const format = ctx.parsed.options.format;
    if (format === undefined) throw new UsageError('export needs --format csv or --format jsonl');
    const output = ctx.parsed.options.output;
    if (output === '') throw new UsageError('--output needs a file name');
    const operator = requireLogin(ctx);
    const query = filterQuery(ctx.parsed, ['format', 'delimiter', 'columns', ...FILTERS]);
    const response = await operator.open(`/api/v1/leads/export?${query}`, {
      headers: { Accept: format === 'csv' ? 'text/csv, application/problem+json' : 'application/jsonl, application/problem+json' },
    });
    if (!('chunks' in response)) throw failure(response);
    const progress = process.stderr.isTTY === true && (output !== undefined || !process.stdout.isTTY);
    const counter = await exportTo(response.chunks, format, output, progress);
    if (output !== undefined) {
      if (ctx.json) ctx.out(JSON.stringify({ file: output, rows: counter.records, bytes: counter.bytes }, null, 2));
      else ctx.out(`exported ${counter.records} rows (${formatBytes(counter.bytes)}) to ${output}`);
    }
    return EXIT.ok;
  },

  webhooks,

  notify,

  subject,

  async logout(ctx) {
    allowOnly(ctx.parsed, [], 0);
    const login = ctx.operator.logout();
    const { registration, response } = await ctx.session.logout();
    if (ctx.json) {
      ctx.out(
        JSON.stringify({ logged_out: login?.client_id ?? null, revoked: registration?.registration_id ?? null, status: response?.status ?? null }, null, 2),
      );
    } else {
      if (login) ctx.out(`logged out ${login.client_id} (operator login forgotten)`);
      if (registration) {
        ctx.out(`revoked ${registration.registration_id} and its refresh tokens; credentials deleted`);
        ctx.out('a later command registers a new identity: an import run again will be a new caller and store its rows again');
      }
      if (!login && !registration) ctx.out('not registered with this service; nothing to do');
    }
    return EXIT.ok;
  },
};

/** A dry run's verdict on a row: read (it would be sent), skipped (--dedupe) or the reason it cannot be. */
async function dryRunOutcome(row: ImportRow, existing?: (fields: Record<string, unknown>) => Promise<string | undefined>): Promise<RowOutcome> {
  if (row.error !== undefined) return { row: row.row, line: row.line, status: 'failed', reason: row.error, exitCode: EXIT.invalid };
  const stored = await existing?.(row.fields!);
  return stored === undefined ? { row: row.row, line: row.line, status: 'read' } : { row: row.row, line: row.line, status: 'skipped', id: stored };
}

async function main(argv: string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`usage error: ${error.message}\n\n${GLOBAL_HELP}\n`);
    return EXIT.usage;
  }
  if (parsed.switches.has('version') && !parsed.command) {
    process.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  if (!parsed.command) {
    const asked = parsed.switches.has('help');
    (asked ? process.stdout : process.stderr).write(`${GLOBAL_HELP}\n`);
    return asked ? EXIT.ok : EXIT.usage;
  }
  const command = Object.hasOwn(commands, parsed.command) ? commands[parsed.command] : undefined;
  if (!command) {
    process.stderr.write(`usage error: unknown command "${parsed.command}"\n\n${GLOBAL_HELP}\n`);
    return EXIT.usage;
  }
  if (parsed.switches.has('help')) {
    process.stdout.write(`${HELP[parsed.command]}\n\nGlobal options: --base-url <url>, --json, --verbose, --help\n`);
    return EXIT.ok;
  }
  // A reader that stops early (`| head`) ends the command quietly, as it does other Unix tools.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw error;
  });
  const verbose = parsed.switches.has('verbose');
  const log = (line: string) => {
    if (verbose) process.stderr.write(`* ${line}\n`);
  };
  try {
    const baseUrl = resolveBaseUrl(parsed);
    const http = new Http(baseUrl, `leads-cli/${VERSION} (node ${process.version})`, log);
    const store = new CredentialStore(configDir());
    const session = new Session(http, store, log);
    const operator = new OperatorLogin(http, store, process.env, log);
    const ctx: Context = { parsed, json: parsed.switches.has('json'), http, session, operator, out: (text) => process.stdout.write(`${text}\n`) };
    return await command(ctx);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`usage error: ${error.message}\n\n${HELP[parsed.command]}\n`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      // With --json the raw problem was already printed on stdout, or is printed here.
      if (parsed.switches.has('json') && error.response && !['health', 'info', 'submit', 'sandbox', 'graphql', 'import'].includes(parsed.command)) {
        process.stdout.write(`${error.response.body !== undefined ? JSON.stringify(error.response.body, null, 2) : error.response.text}\n`);
      }
      process.stderr.write(`${error.message.startsWith('error') ? '' : 'error: '}${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`error: ${(error as Error).stack ?? String(error)}\n`);
    return EXIT.server;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${String(error)}\n`);
    process.exitCode = EXIT.server;
  },
);
