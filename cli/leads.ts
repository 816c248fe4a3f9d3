// The `leads` command-line client: one file, bundled by esbuild, no runtime dependencies, Node.js 18 or newer.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Parsed, UsageError, allowOnly, parseArgs } from './args.js';
import { CredentialStore, configDir } from './credentials.js';
import { CliError, EXIT, Http, HttpResponse, ensureOk } from './http.js';
import { LEAD_FIELD_NAMES, REQUIRED_LEAD_FIELDS } from '../src/leads/lead-rules.js';
import { RowOutcome, idempotencyKey, outcomeOf, progressBar, readRows } from './import.js';
import { Session } from './session.js';
import { VERSION } from './version.js';

/** Replaced by the service with its PUBLIC_BASE_URL when it serves this file at /cli/leads. */
const DEFAULT_BASE_URL: string = '__LEADS_BASE_URL__';

const GLOBAL_HELP = `leads ${VERSION}: command-line client for the Leads API

Usage: leads <command> [options]

Commands:
  health                 service health
  info                   company information and links
  submit                 send a lead (stored)
  sandbox                validate a lead without storing it
  register               register this client (anonymous, or --email) and store its credentials
  token                  print a current access token
  graphql <query>        run a read-only GraphQL query
  import <file>          send every row of a .csv or .jsonl file, once
  logout                 revoke the stored registration and delete its credentials

Global options:
  --base-url <url>       the service (env LEADS_BASE_URL; default ${DEFAULT_BASE_URL.startsWith('__') ? 'none: set one' : DEFAULT_BASE_URL})
  --json                 print the raw JSON response
  --verbose              log each HTTP request and token renewal on stderr
  --help, -h             help (also after a command: leads submit --help)
  --version              print the version

Exit codes: 0 ok, 1 usage, 2 invalid input, 3 auth, 4 rate limited, 5 server or network.
Credentials: ${'$'}LEADS_CONFIG_DIR, else ${'$'}XDG_CONFIG_HOME/leads-cli, else ~/.config/leads-cli (credentials.json, mode 0600).`;

const LEAD_INPUT_HELP = `Input: ${LEAD_FIELD_NAMES.map((name) => `--${name}`).join(' ')}, or a JSON object from --file <path>
(--file - or piped stdin reads standard input). Flags override the fields of the JSON object.`;

const HELP: Record<string, string> = {
  health: 'Usage: leads health [--json]\n\nGET /api/v1/health: status, version and checks. Exit 5 when the service is down.',
  info: 'Usage: leads info [--json]\n\nGET /api/v1/info: brand, company, contact details and links.',
  submit: `Usage: leads submit [fields | --file <path>] [--json]\n\nPOST /api/v1/lead: validates and stores a lead (with an Idempotency-Key, so retries never duplicate).\n${LEAD_INPUT_HELP}`,
  sandbox: `Usage: leads sandbox [fields | --file <path>] [--json]\n\nPOST /api/v1/sandbox: the same validation as submit; nothing is stored.\n${LEAD_INPUT_HELP}`,
  register:
    'Usage: leads register [--email <address>] [--name <client name>] [--json]\n\nPOST /api/v1/agent/identity: anonymous, or an identity assertion with a verified_email claim.\nStores the registration, its assertion and an access token; later commands send the token (agent quota).',
  token:
    'Usage: leads token [--json]\n\nPrints a current access token: the stored one, renewed from the assertion within 60 s of expiry,\nre-registering when the assertion has expired. Needs `leads register` first (exit 3 otherwise).',
  graphql: 'Usage: leads graphql <query> [--variables <json>] [--json]\n\nPOST /api/v1/graphql; prints `data` as JSON. Exit 2 when the answer has errors.',
  import: `Usage: leads import <file.csv|file.jsonl> [--json]\n\nSends each row to POST /api/v1/lead with Idempotency-Key import-<sha256 of the row>, so a rerun never\nduplicates (the key is scoped to the caller: rerun with the same registration, or anonymously from the same\naddress). CSV: a header naming the columns among ${LEAD_FIELD_NAMES.join(', ')}; RFC 4180 quoting.\nJSONL: one JSON object per line. Rows are numbered from 1 (CSV: after the header; JSONL: non-blank lines).\nExit 2 if any row failed validation.`,
  logout: 'Usage: leads logout [--json]\n\nRevokes the stored registration (by its assertion, at /oauth2/revoke) and deletes its credentials.',
};

interface Context {
  parsed: Parsed;
  json: boolean;
  http: Http;
  session: Session;
  out: (text: string) => void;
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
    allowOnly(ctx.parsed, ['email', 'name'], 0);
    const { identity, response } = await ctx.session.register({ email: ctx.parsed.options.email, name: ctx.parsed.options.name });
    await ctx.session.bearer(true);
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
    allowOnly(ctx.parsed, [], 1);
    const file = ctx.parsed.positionals[0];
    if (!file) throw new UsageError('import needs a file: leads import leads.csv');
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const rows = readRows(file, text);
    const tty = !ctx.json && process.stdout.isTTY === true;
    const outcomes: RowOutcome[] = [];
    let ok = 0;
    let failed = 0;
    for (const row of rows) {
      let outcome: RowOutcome;
      if (row.error !== undefined) {
        outcome = { row: row.row, status: 'failed', reason: row.error, exitCode: EXIT.invalid };
      } else {
        try {
          const sentAt = Date.now();
          const response = await ctx.session.request('/api/v1/lead', { json: row.fields, headers: { 'Idempotency-Key': idempotencyKey(row.fields!) } });
          outcome = outcomeOf(row.row, response, sentAt);
        } catch (error) {
          if (!(error instanceof CliError)) throw error;
          outcome = { row: row.row, status: 'failed', reason: error.message.replace(/\n/g, ' '), exitCode: error.exitCode };
          // Without a service every other row would fail the same way: stop here.
          if (error.exitCode === EXIT.server && !error.response) {
            outcomes.push(outcome);
            break;
          }
        }
      }
      outcomes.push(outcome);
      if (outcome.status === 'failed') failed++;
      else ok++;
      if (tty) process.stdout.write(`\r${progressBar(outcomes.length, rows.length, ok, failed)}`);
      else if (!ctx.json) {
        ctx.out(
          outcome.status === 'failed'
            ? `row ${outcome.row}: failed: ${outcome.reason}`
            : `row ${outcome.row}: ok${outcome.status === 'replayed' ? ' (already stored)' : ''}`,
        );
      }
    }
    if (tty) process.stdout.write('\n');
    const stored = outcomes.filter((o) => o.status === 'stored').length;
    const replayed = outcomes.filter((o) => o.status === 'replayed').length;
    const failures = outcomes.filter((o): o is Extract<RowOutcome, { status: 'failed' }> => o.status === 'failed');
    if (ctx.json) {
      ctx.out(
        JSON.stringify(
          {
            stored,
            replayed,
            failed: failures.length,
            total: rows.length,
            rows: outcomes.map(({ exitCode: _e, ...o }: RowOutcome & { exitCode?: number }) => o),
          },
          null,
          2,
        ),
      );
    } else {
      ctx.out(`${stored} stored, ${replayed} already stored (replayed), ${failures.length} failed`);
      if (failures.length) {
        ctx.out(`failed rows: ${failures.map((f) => f.row).join(', ')}`);
        for (const f of failures) ctx.out(`  row ${f.row}: ${f.reason}`);
      }
      if (outcomes.length < rows.length) ctx.out(`stopped after row ${outcomes.length} of ${rows.length}: the service cannot be reached`);
    }
    const codes = failures.map((f) => f.exitCode);
    for (const code of [EXIT.server, EXIT.rateLimited, EXIT.auth, EXIT.invalid]) if (codes.includes(code)) return code;
    return EXIT.ok;
  },

  async logout(ctx) {
    allowOnly(ctx.parsed, [], 0);
    const { registration, response } = await ctx.session.logout();
    if (ctx.json) ctx.out(JSON.stringify({ revoked: registration?.registration_id ?? null, status: response?.status ?? null }, null, 2));
    else ctx.out(registration ? `revoked ${registration.registration_id}; credentials deleted` : 'not registered with this service; nothing to do');
    return EXIT.ok;
  },
};

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
  const verbose = parsed.switches.has('verbose');
  const log = (line: string) => {
    if (verbose) process.stderr.write(`* ${line}\n`);
  };
  try {
    const baseUrl = resolveBaseUrl(parsed);
    const http = new Http(baseUrl, `leads-cli/${VERSION} (node ${process.version})`, log);
    const session = new Session(http, new CredentialStore(configDir()), log);
    const ctx: Context = { parsed, json: parsed.switches.has('json'), http, session, out: (text) => process.stdout.write(`${text}\n`) };
    return await command(ctx);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`usage error: ${error.message}\n\n${HELP[parsed.command]}\n`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      // With --json the raw problem was already printed on stdout, or is printed here.
      if (parsed.switches.has('json') && error.response && !['health', 'info', 'submit', 'sandbox', 'graphql'].includes(parsed.command)) {
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
