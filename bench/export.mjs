// Export benchmark (issue 20): GET /api/v1/leads/export over a SQLite database of --rows leads. Not part of CI.
// Usage (after `npm run build`; `npm run bench:export -- …` builds when stale):
//   node bench/export.mjs [--rows 1000000] [--format csv] [--page-size N] [--duration 10] [--rounds 3] [--rate 1000]
//                         [--connections 10]
// 1. seeds --rows leads straight into a fresh SQLite file (the service's own migrations make the schema first; then
//    prepared INSERTs in transactions of 50,000 rows), 2. starts dist/server.mjs on it (pinned to CPU 0 when taskset is
//    there; the clients are not pinned), 3. exports once alone: rows/s, bytes/s, time to first byte, the
//    server's peak RSS (VmHWM), 4. loads POST /api/v1/lead with autocannon at a fixed --rate for --duration seconds,
//    without and then with exports running back to back, --rounds times, and reports the median intake p99 of each
//    and their ratio.
// The export client is a child process (bench/export-client.mjs) so that reading the file does not delay autocannon's
// own clock. Targets (issue 20): ≥ 100,000 rows/s on SQLite, peak RSS ≤ 200 MB, intake p99 during export ≤ 2× without.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import autocannon from 'autocannon';
import { importJWK, SignJWT } from 'jose';
import { freePort } from '../scripts/free-port.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICE = join(ROOT, 'dist/server.mjs');
const CLIENT = join(ROOT, 'bench/export-client.mjs');
const SEED_BATCH = 50_000;
const EXPORT_TIMEOUT_MS = 300_000;

function parseArgs(argv) {
  const options = { rows: 1_000_000, format: 'csv', pageSize: undefined, duration: 10, rounds: 3, rate: 1000, connections: 10 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    const number = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive whole number`);
      return n;
    };
    if (flag === '--rows') options.rows = number();
    else if (flag === '--page-size') options.pageSize = number();
    else if (flag === '--duration') options.duration = number();
    else if (flag === '--rounds') options.rounds = number();
    else if (flag === '--rate') options.rate = number();
    else if (flag === '--connections') options.connections = number();
    else if (flag === '--format') options.format = value();
    else throw new Error(`Unknown option ${argv[i]}; see the head of bench/export.mjs`);
  }
  return options;
}

const hasTaskset = spawnSync('taskset', ['-V']).status === 0 && cpus().length > 1;
const pinned = (cpu, args) => (hasTaskset ? ['taskset', ['-c', String(cpu), ...args]] : [args[0], args.slice(1)]);

async function startService(dataDir, extraEnv = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    PORT: String(port),
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ANONYMOUS: '100000000/1s',
    RATE_LIMIT_AGENT: '1000000000/1s',
    ...extraEnv,
  };
  // e.g. SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the service.
  const nodeArgs = process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const [command, args] = pinned(0, [process.execPath, ...nodeArgs, SERVICE]);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${stderr}`);
    if (performance.now() - started > 60_000) throw new Error(`the service was not healthy after 60 s:\n${stderr}`);
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
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

/** VmHWM and VmRSS of a process, in MB. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1]) / 1024;
  return { peakMb: kb('VmHWM'), rssMb: kb('VmRSS') };
}

/** Leads as the service would store them, varied enough that quoting, neutralisation and filters all have work. */
function seed(file, rows) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const columns = db
    .prepare('PRAGMA table_info(leads)')
    .all()
    .map((column) => column.name);
  const insert = db.prepare(`INSERT INTO leads (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
  const origins = ['site', 'google-ads', 'linkedin', 'bench', null];
  const start = Date.UTC(2025, 0, 1);
  const write = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const email = `Lead${i}@example${i % 97}.com.br`;
      const received = new Date(start + i * 20);
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

function uuidV7Like(ms, n) {
  const hex =
    ms.toString(16).padStart(12, '0') + (0x7000 + (n & 0xfff)).toString(16) + (0x8000 + ((n >> 12) & 0x3fff)).toString(16) + n.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** An operator token with leads:export, signed with the service's own current access-token key (read from its database). */
async function operatorToken(base, file) {
  await (await fetch(`${base}/.well-known/jwks.json`)).arrayBuffer(); // the keys exist once JWKS answers
  const db = new Database(file, { readonly: true });
  const row = db.prepare("SELECT kid, alg, private_jwk FROM signing_keys WHERE purpose = 'access_token' AND retired_at IS NULL ORDER BY created_at DESC").get();
  db.close();
  const key = await importJWK(JSON.parse(row.private_jwk), row.alg);
  const clientId = `bench_${randomUUID()}`;
  return new SignJWT({ client_id: clientId, scope: 'leads:export', kind: 'operator' })
    .setProtectedHeader({ alg: row.alg, typ: 'at+jwt', kid: row.kid })
    .setIssuer(base)
    .setAudience(base)
    .setSubject(clientId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('14m')
    .sign(key);
}

/**
 * One export through the child client; resolves to { status, rows, bytes, firstByteMs, totalMs }. The client is not
 * pinned (like autocannon): on a shared machine another process pinned to the same core could starve it.
 */
async function exportOnce(url, token) {
  const child = spawn(process.execPath, [CLIENT, url, token], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), EXPORT_TIMEOUT_MS);
  const [code, signal] = await once(child, 'exit');
  clearTimeout(timer);
  if (code !== 0) throw new Error(`export client failed (${signal ?? code}${signal ? `, after ${EXPORT_TIMEOUT_MS / 1000} s` : ''}): ${out}`);
  return JSON.parse(out);
}

function intake(base, opts) {
  return new Promise((done, fail) =>
    autocannon(
      {
        url: `${base}/api/v1/lead`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ nome: 'Ana Lima', email: 'ana@example.com', telefone: '+55 11 91234-5678', origem: 'bench' }),
        connections: opts.connections,
        overallRate: opts.rate,
        duration: opts.duration,
      },
      (error, result) => (error ? fail(error) : done(result)),
    ),
  );
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-export-'));
  const file = join(dataDir, 'leads.sqlite');
  let service;
  try {
    // The service makes the schema (its migrations), then stops; the rows go in directly.
    await (await startService(dataDir)).stop();
    const seedSeconds = seed(file, opts.rows);
    console.log(`seeded ${opts.rows} leads in ${seedSeconds.toFixed(1)} s (${Math.round(opts.rows / seedSeconds)} rows/s)`);

    service = await startService(dataDir, opts.pageSize ? { EXPORT_PAGE_SIZE: String(opts.pageSize) } : {});
    const token = await operatorToken(service.base, file);
    const url = `${service.base}/api/v1/leads/export?format=${opts.format}`;
    const idle = memory(service.pid);
    await exportOnce(`${url}&until=2025-01-01T00:00:10Z`, token); // warm-up: a small export
    const alone = await exportOnce(url, token);
    if (alone.status !== 200 || alone.rows !== opts.rows) throw new Error(`export answered ${alone.status} with ${alone.rows} rows, not ${opts.rows}`);
    const afterExport = memory(service.pid);

    await intake(service.base, { ...opts, duration: 1 }); // warm-up
    // Rounds of intake without, then with, exports running back to back: medians over rounds, so that a burst of
    // another process on a shared machine moves one round, not the result.
    const rounds = [];
    const during = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const without = await intake(service.base, opts);
      let stop = false;
      const exporting = (async () => {
        while (!stop) during.push(await exportOnce(url, token));
      })();
      await sleep(300); // the first export is under way
      const withExport = await intake(service.base, opts);
      stop = true;
      await exporting;
      rounds.push({ without, withExport });
      console.log(
        `round ${round}/${opts.rounds}: intake p99 ${without.latency.p99} ms without export, ${withExport.latency.p99} ms during (ratio ${(withExport.latency.p99 / without.latency.p99).toFixed(2)})`,
      );
    }
    const end = memory(service.pid);
    const p99Without = median(rounds.map((round) => round.without.latency.p99));
    const p99With = median(rounds.map((round) => round.withExport.latency.p99));
    const p50Without = median(rounds.map((round) => round.without.latency.p50));
    const p50With = median(rounds.map((round) => round.withExport.latency.p50));
    const rpsWithout = median(rounds.map((round) => round.without.requests.average));
    const rpsWith = median(rounds.map((round) => round.withExport.requests.average));

    const rowsPerSecond = (alone.rows / alone.totalMs) * 1000;
    const duringRows = during.reduce((sum, run) => sum + run.rows, 0);
    const duringMs = during.reduce((sum, run) => sum + run.totalMs, 0);
    const non2xx = rounds.reduce((sum, { without, withExport }) => sum + without.non2xx + withExport.non2xx + without.errors + withExport.errors, 0);
    const gitRev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    console.log(
      [
        `## Export benchmark, ${new Date().toISOString()} (${gitRev}, Node ${process.version}, ${cpus().length} × ${cpus()[0].model.trim()})`,
        '',
        `\`node bench/export.mjs --rows ${opts.rows} --format ${opts.format}${opts.pageSize ? ` --page-size ${opts.pageSize}` : ''} --duration ${opts.duration} --rounds ${opts.rounds} --rate ${opts.rate} --connections ${opts.connections}\`${hasTaskset ? '; service pinned to CPU 0, clients not pinned' : ''}`,
        '',
        '| measure | value | target |',
        '|---|--:|--:|',
        `| export alone: rows/s | ${Math.round(rowsPerSecond)} | ≥ 100000 |`,
        `| export alone: MB/s, first byte ms, total s | ${(alone.bytes / 1e6 / (alone.totalMs / 1000)).toFixed(1)}, ${alone.firstByteMs.toFixed(0)}, ${(alone.totalMs / 1000).toFixed(1)} | |`,
        `| server RSS idle / peak after the export / peak at the end (MB) | ${idle.rssMb.toFixed(0)} / ${afterExport.peakMb.toFixed(0)} / ${end.peakMb.toFixed(0)} | peak ≤ 200 |`,
        `| intake p99 without export, median of ${opts.rounds} rounds (ms; p50, req/s) | ${p99Without} (${p50Without}, ${Math.round(rpsWithout)}) | |`,
        `| intake p99 during exports, median of ${opts.rounds} rounds (ms; p50, req/s) | ${p99With} (${p50With}, ${Math.round(rpsWith)}) | |`,
        `| intake p99 ratio during / without (per round: ${rounds.map((r) => (r.withExport.latency.p99 / r.without.latency.p99).toFixed(2)).join(', ')}) | ${(p99With / p99Without).toFixed(2)} | ≤ 2 |`,
        `| exports during the intake load: runs, rows/s | ${during.length}, ${Math.round((duringRows / duringMs) * 1000)} | |`,
        `| intake non-2xx and errors | ${non2xx} | 0 |`,
      ].join('\n'),
    );
  } finally {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
