// What the benches share: starting dist/server.mjs (or another build's) on a fresh database, reading its memory and
// CPU time, an operator client and its token, autocannon runs, worker threads that play a receiver, the outbox backlog,
// the paired method's verdicts, and seeding leads straight into a SQLite file.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freePort } from '../scripts/free-port.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVICE = join(ROOT, 'dist/server.mjs');
const HEALTH_TIMEOUT_MS = 60_000;
const SEED_BATCH = 50_000;

export const hasTaskset = spawnSync('taskset', ['-V']).status === 0 && cpus().length > 1;
/** [command, args] that run `args` on that CPU when taskset is there. */
export const pinned = (cpu, args) => (hasTaskset ? ['taskset', ['-c', String(cpu), ...args]] : [args[0], args.slice(1)]);

/**
 * Starts dist/server.mjs on `dataDir` (pinned to CPU 0), rate limits far beyond any load here, and waits for its first
 * healthy answer. `env` is the service's environment, for commands that must reach the same database. stop() leaves
 * the data directory to the caller. SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the service.
 * `script`: another build's server.mjs (a "before" measurement); dist/server.mjs by default. Its clients command
 * (createOperatorClient) is that build's own, beside it.
 */
export async function startService(dataDir, extraEnv = {}, script = SERVICE) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ANONYMOUS: '100000000/1s',
    RATE_LIMIT_AGENT: '1000000000/1s',
    RATE_LIMIT_OPERATOR: '1000000000/1s',
    RATE_LIMIT_TOKEN: '100000000/1s',
    ...extraEnv,
  };
  const nodeArgs = process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const [command, args] = pinned(0, [process.execPath, ...nodeArgs, script]);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    process.stderr.write(chunk);
    stderr = (stderr + chunk).slice(-4000);
  });
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited before it was healthy:\n${stderr}`);
    if (performance.now() - started > HEALTH_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`the service was not healthy after ${HEALTH_TIMEOUT_MS / 1000} s:\n${stderr}`);
    }
    try {
      const res = await fetch(`${base}/api/v1/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  return {
    base,
    env,
    clients: join(dirname(script), 'src/oauth/operator-clients.command.js'),
    // taskset execs node, so the pid is the service's own.
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

/** CPU time (user + system, ms) a process has used: /proc/PID/stat's utime and stime, in clock ticks of 10 ms. */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One autocannon run; autocannon is imported on first use (bench/run.mjs can take it from AUTOCANNON_DIR instead). */
export async function runLoad(options) {
  const { default: autocannon } = await import('autocannon');
  return new Promise((done, fail) => autocannon(options, (error, result) => (error ? fail(error) : done(result))));
}

/**
 * A bench's command line: `--flag value`, `--flag=value` or a bare switch, each flag the option of that name in camel
 * case (--drain-timeout → drainTimeout) in a copy of `defaults`, whose type says how to read it: a number (≥ `min[name]`,
 * 1 unless told), a boolean (a switch), an array (a comma-separated list), a string (a path, resolved). With `quick`
 * (the --quick switch), the values of `quick` replace the defaults of the options not given. `script` names the bench
 * for an unknown flag's message.
 */
export function parseOptions(argv, defaults, { script, min = {}, quick = {} }) {
  const options = { ...defaults };
  const given = new Set();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const name = flag.replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!flag.startsWith('--') || !(name in defaults)) throw new Error(`Unknown option ${argv[i]}; see the head of ${script}`);
    given.add(name);
    const kind = typeof defaults[name];
    if (kind === 'boolean') {
      options[name] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (Array.isArray(defaults[name])) options[name] = value.split(',');
    else if (kind === 'string') options[name] = resolve(value);
    else {
      const n = Number(value);
      const least = min[name] ?? 1;
      if (!Number.isFinite(n) || n < least) throw new Error(`${flag} needs a number ≥ ${least}`);
      options[name] = n;
    }
  }
  if (options.quick) for (const [name, value] of Object.entries(quick)) if (!given.has(name)) options[name] = value;
  return options;
}

/** The paired method of bench/RESULTS.md ("Method"): at least this many pairs of this many seconds, after a warm-up. */
export const PAIRED = { pairs: 5, seconds: 20, warmup: 3 };

/** min–max of the ratios, as the paired method reports a median's spread. */
export const spread = (values) => `${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}`;

/** Met only when the whole spread is at or above the bar; not met when all of it is below; else inconclusive. */
export function verdict(values, bar) {
  if (bar === undefined) return '';
  if (Math.min(...values) >= bar) return ` met (bar ${bar})`;
  if (Math.max(...values) < bar) return ` not met (bar ${bar})`;
  return ` inconclusive (the spread crosses the bar ${bar})`;
}

/** The outbox backlog (webhook and e-mail deliveries) from GET /api/v1/health's webhooks.pending. */
export async function outboxPending(service) {
  const res = await fetch(`${service.base}/api/v1/health`);
  const body = await res.json();
  if (!body.webhooks) throw new Error(`health has no outbox backlog: ${res.status} ${JSON.stringify(body)}`);
  return body.webhooks.pending;
}

/**
 * A receiver run as a worker thread (`file`, next to this one), so that the load generator's event loop never waits on
 * it: it posts { port } once listening, then answers each message posted to it with one message. ask(message) posts
 * and resolves to the answer.
 */
export async function startWorker(file) {
  const worker = new Worker(new URL(file, import.meta.url));
  const { port } = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    port,
    ask: (message) =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage(message);
      }),
    close: () => worker.terminate(),
  };
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
/** A fixed key (32 bytes, base64) for SECRETS_KEY, so that every service start of a run could read the others' secrets. */
export const SECRETS_KEY = Buffer.alloc(32, 21).toString('base64');

/**
 * A fresh service (`script`, dist/server.mjs by default) on a fresh database of `kind`, with `env` added; `prepare`
 * runs against it before one sample lead, which must answer 201. stop() stops it and drops the database.
 */
export async function freshService(kind, label, env, { script = SERVICE, prepare } = {}) {
  const database = await freshDatabase(kind, label);
  let service;
  try {
    service = await startService(database.dataDir, { ...database.env, ...env }, script);
    await prepare?.(service);
    const sample = await fetch(`${service.base}/api/v1/lead`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(LEAD) });
    const lead = await sample.json();
    if (sample.status !== 201 || typeof lead.id !== 'string') throw new Error(`a sample lead answered ${sample.status}: ${JSON.stringify(lead)}`);
  } catch (error) {
    await service?.stop();
    await database.drop();
    throw error;
  }
  return {
    ...service,
    stop: async () => {
      await service.stop();
      await database.drop();
    },
  };
}

/** VmRSS (now) and VmHWM (peak) of a process, in MB; undefined once it is gone or exiting. */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const m = { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
    return Number.isFinite(m.rssMb) && Number.isFinite(m.peakMb) ? m : undefined;
  } catch {
    return undefined;
  }
}

/** A stored operator client, made by the clients:create command on the service's database: { client_id, client_secret, scope }. */
export function createOperatorClient(service, name, scope) {
  const created = execFileSync(process.execPath, [service.clients, 'create', '--name', name, '--scope', scope], {
    cwd: ROOT,
    env: service.env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(created.toString().trim().split('\n').pop());
}

/** An access token for the client from POST /oauth2/token (client_credentials); it lives 15 minutes. */
export async function clientCredentialsToken(service, client) {
  const res = await fetch(`${service.base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A new operator client with `scope` and a token for it. */
export async function operatorToken(service, name, scope) {
  return clientCredentialsToken(service, createOperatorClient(service, name, scope));
}

/** The person whose leads the email filter finds: one lead in every 10,000, the address in mixed case. */
/** The lead every throughput bench sends: each field with something to normalise (spaces, letter case, a telephone to parse). */
export const LEAD = {
  nome: '  Maria   Fernanda Souza ',
  email: 'maria.souza@SouzaEFilhos.com.BR',
  telefone: '+55 (11) 98765-4321',
  empresa: 'Souza & Filhos',
  mensagem: 'Olá!\nPodem me ligar?',
  origem: 'bench',
};

/**
 * LEAD as a body that differs from lead to lead: autocannon's idReplacement fills [<id>] (or the caller does). Since
 * issue 33, screening holds a sixth identical lead from one address (duplicate_burst), and a held lead is neither
 * lead.received for webhooks nor notified by e-mail.
 */
export const VARIED_LEAD_BODY = JSON.stringify({ ...LEAD, mensagem: `${LEAD.mensagem} Pedido [<id>]` });

/** autocannon's options for POST /api/v1/lead on `service`, every lead different (VARIED_LEAD_BODY). */
export function leadLoad(service, connections) {
  return { url: `${service.base}/api/v1/lead`, method: 'POST', headers: JSON_HEADERS, body: VARIED_LEAD_BODY, idReplacement: true, connections };
}

export const FREQUENT_EMAIL = 'Cliente.Frequente@Example.com.br';
export const SEED_START_MS = Date.UTC(2025, 0, 1);
/** Leads are seeded 20 ms apart, from SEED_START_MS. */
export const SEED_STEP_MS = 20;

/**
 * Seeds `rows` leads as the service would store them into a SQLite file whose schema the service's migrations made
 * (prepared INSERTs in transactions of 50,000 rows), varied enough that quoting, neutralisation and filters all have
 * work. Returns the seconds it took.
 */
export function seedSqlite(file, rows) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const columns = db
    .prepare('PRAGMA table_info(leads)')
    .all()
    .map((column) => column.name);
  const insert = db.prepare(`INSERT INTO leads (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
  const origins = ['site', 'google-ads', 'linkedin', 'bench', null];
  const write = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const email = i % 10_000 === 1 ? FREQUENT_EMAIL : `Lead${i}@example${i % 97}.com.br`;
      const received = new Date(SEED_START_MS + i * SEED_STEP_MS);
      const values = {
        id: uuidV7Like(received.getTime(), i),
        nome: i % 50 === 0 ? `=HYPERLINK("http://x/${i}")` : `Maria Fernanda Souza ${i}`,
        email,
        email_folded: email.toLowerCase(),
        telefone: i % 3 ? '+55 (11) 98765-4321' : null,
        telefone_e164: i % 3 ? '+5511987654321' : null,
        empresa: i % 4 ? `Souza, Filhos & Cia ${i % 1000}` : null,
        mensagem: i % 2 ? `Olá!\nPodem me ligar? Pedido nº ${i}; "urgente"` : 'Quero uma proposta para 30 posições de trabalho.',
        origem: origins[i % origins.length],
        registration_id: null,
        client_id: null,
        channel: ['api', 'form', 'mcp', 'cli'][i % 4],
        // TypeORM's SQLite datetime format, as the service writes it.
        received_at: received.toISOString().replace('T', ' ').replace('Z', ''),
      };
      insert.run(Object.fromEntries(columns.map((column) => [column, column in values ? values[column] : null])));
    }
  });
  const began = performance.now();
  for (let from = 0; from < rows; from += SEED_BATCH) write(from, Math.min(rows, from + SEED_BATCH));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return (performance.now() - began) / 1000;
}

export function uuidV7Like(ms, n) {
  const hex =
    ms.toString(16).padStart(12, '0') + (0x7000 + (n & 0xfff)).toString(16) + (0x8000 + ((n >> 12) & 0x3fff)).toString(16) + n.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile (nearest rank) of `values`. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

let schemas = 0;

/**
 * A fresh database for one service: an empty SQLite folder, or a new PostgreSQL schema of TEST_DATABASE_URL (`kind`
 * 'postgres'), named after `label`; drop() removes it. `env` is what the service needs to use it.
 */
export async function freshDatabase(kind, label) {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${label}-`));
  if (kind === 'sqlite') return { env: {}, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  const schema = `bench_${label}_${process.pid}_${++schemas}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE SCHEMA ${schema}`);
  const url = new URL(process.env.TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATABASE_URL: url.toString() },
    dataDir,
    drop: async () => {
      await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** GET base+path with keep-alive; resolves to { status, body, ms }. */
export function get(agent, base, path, headers) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const req = request(base + path, { agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode, body: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}
