// `leads import` of a file with an operator login, against posting the same rows with autocannon (out of CI).
// Usage (after `npm run build`): node bench/import.mjs [--rows 100000] [--concurrency 8] [--rounds 1] [--cli-heap MB]
// Each run starts a fresh service (SQLite in a fresh DATA_DIR; pinned to CPU 0 when taskset is there, the client on the
// other cores), creates an operator client with the clients:create command, and sends the same rows: once with the CLI
// (`leads login` then `leads import rows.csv --concurrency N`; its resident memory sampled every 100 ms), once with
// autocannon (N connections, one row per request with the same Idempotency-Key the CLI derives, the operator token).
// Prints rows/s, the CLI's peak RSS and RSS through the run (flat memory), and the ratio CLI/autocannon. --cli-heap runs
// the CLI with --max-old-space-size=MB: what it keeps alive fits in that, whatever the file's size.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { freePort } from '../scripts/free-port.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICE = join(ROOT, 'dist/server.mjs');
const CLI = join(ROOT, 'dist/cli/leads.cjs');
const CLIENTS = join(ROOT, 'dist/src/oauth/operator-clients.command.js');

function parseArgs(argv) {
  const options = { rows: 100_000, concurrency: 8, rounds: 1, 'cli-heap': 0 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const name = flag.slice(2);
    if (!(name in options)) throw new Error(`Unknown option ${argv[i]}; see the head of bench/import.mjs`);
    const number = Number(inline ?? argv[++i]);
    if (!Number.isInteger(number) || number < (name === 'cli-heap' ? 0 : 1)) throw new Error(`${flag} needs a positive whole number`);
    options[name] = number;
  }
  return options;
}

const hasTaskset = spawnSync('taskset', ['-V']).status === 0 && cpus().length > 1;
const onClientCores = (command, args) => (hasTaskset ? ['taskset', ['-c', `1-${cpus().length - 1}`, command, ...args]] : [command, args]);

/** The rows: unique leads, a quoted line break in each mensagem, as a spreadsheet would save them (`;`). */
function lead(i) {
  return {
    nome: `Pessoa ${i}`,
    email: `pessoa${i}@example.com`,
    telefone: `+55 11 9${String(i).padStart(8, '0')}`,
    mensagem: 'linha 1\nlinha 2',
    origem: 'bench-import',
  };
}

async function writeRows(file, rows) {
  const out = createWriteStream(file);
  out.write('nome;email;telefone;mensagem;origem\n');
  for (let i = 0; i < rows; i++) {
    const l = lead(i);
    if (!out.write(`${l.nome};${l.email};${l.telefone};"${l.mensagem}";${l.origem}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

/** cli/import.ts's key: sha256 of the row with keys sorted, strings trimmed and NFC. */
const idempotencyKey = (fields) =>
  `import-${createHash('sha256')
    .update(
      JSON.stringify(
        Object.fromEntries(
          Object.keys(fields)
            .sort()
            .map((k) => [k, fields[k].trim().normalize('NFC')]),
        ),
      ),
    )
    .digest('hex')}`;

async function startService() {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_OPERATOR: '1000000000/1s',
    RATE_LIMIT_TOKEN: '100000000/1s',
  };
  const [command, args] = hasTaskset ? ['taskset', ['-c', '0', process.execPath, SERVICE]] : [process.execPath, [SERVICE]];
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let waited = 0; ; waited += 50) {
    if (child.exitCode !== null) throw new Error('the service exited before it was healthy');
    if (waited > 30_000) throw new Error('the service was not healthy within 30 s');
    try {
      if ((await fetch(`${base}/api/v1/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  const created = execFileSync(process.execPath, [CLIENTS, 'create', '--name', 'bench import', '--scope', 'leads:write'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const client = JSON.parse(created.toString().trim().split('\n').pop());
  const stored = () => {
    const db = new Database(join(dataDir, 'leads.sqlite'), { readonly: true });
    try {
      return db.prepare("SELECT COUNT(*) AS n FROM leads WHERE origem = 'bench-import'").get().n;
    } finally {
      db.close();
    }
  };
  const stop = async () => {
    child.kill('SIGTERM');
    await once(child, 'exit');
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { base, client, stored, stop };
}

/** VmRSS (now) and VmHWM (peak) of a process, in MB. */
function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const m = { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
    return Number.isFinite(m.rss) && Number.isFinite(m.peak) ? m : undefined; // undefined once the process is exiting
  } catch {
    return undefined;
  }
}

async function runCli(service, file, opts, work) {
  const env = { PATH: process.env.PATH, HOME: work, LEADS_CONFIG_DIR: join(work, 'config'), LEADS_CLIENT_SECRET: service.client.client_secret };
  const heap = opts['cli-heap'] ? [`--max-old-space-size=${opts['cli-heap']}`] : [];
  const cli = (args) => onClientCores(process.execPath, [...heap, CLI, '--base-url', service.base, ...args]);
  const [loginCommand, loginArgs] = cli(['login', '--client-id', service.client.client_id]);
  execFileSync(loginCommand, loginArgs, { env: { ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  // Without LEADS_CLIENT_SECRET the import uses the stored login only (a 100,000-row import fits in its token's life).
  delete env.LEADS_CLIENT_SECRET;
  const [command, args] = cli(['import', file, '--concurrency', String(opts.concurrency)]);
  const started = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let tail = '';
  child.stdout.on('data', (chunk) => (tail = (tail + chunk).slice(-2000)));
  // taskset execs node, so the pid is the CLI's own.
  const samples = [];
  let peak = 0;
  const sampler = setInterval(() => {
    const m = memory(child.pid);
    if (!m) return;
    samples.push(m.rss);
    peak = Math.max(peak, m.peak);
  }, 100);
  const [code] = await once(child, 'exit');
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`leads import exited ${code}: ${tail}`);
  const stored = Number(/(\d+) stored, \d+ already stored/.exec(tail)?.[1]);
  return { seconds, stored, peak, samples };
}

async function runAutocannon(service, opts) {
  const token = await fetch(`${service.base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${service.client.client_id}:${service.client.client_secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  }).then((res) => res.json());
  let next = 0;
  const started = performance.now();
  const result = await new Promise((done, fail) =>
    autocannon(
      {
        url: service.base,
        connections: opts.concurrency,
        amount: opts.rows,
        requests: [
          {
            method: 'POST',
            path: '/api/v1/lead',
            setupRequest: (req) => {
              const fields = lead(next++);
              return {
                ...req,
                headers: { 'content-type': 'application/json', authorization: `Bearer ${token.access_token}`, 'idempotency-key': idempotencyKey(fields) },
                body: JSON.stringify(fields),
              };
            },
          },
        ],
      },
      (error, value) => (error ? fail(error) : done(value)),
    ),
  );
  return { seconds: (performance.now() - started) / 1000, non2xx: result.non2xx, errors: result.errors + result.timeouts, p99: result.latency.p99 };
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const work = mkdtempSync(join(tmpdir(), 'bench-import-work-'));
  const file = join(work, 'rows.csv');
  await writeRows(file, opts.rows);
  const lines = [];
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      let service = await startService();
      let cli;
      try {
        cli = await runCli(service, file, opts, work);
        if (service.stored() !== opts.rows || cli.stored !== opts.rows)
          throw new Error(`the CLI stored ${cli.stored} (${service.stored()} in the database) of ${opts.rows}`);
      } finally {
        await service.stop();
      }
      service = await startService();
      let load;
      try {
        load = await runAutocannon(service, opts);
        if (service.stored() !== opts.rows)
          throw new Error(`autocannon stored ${service.stored()} of ${opts.rows} (${load.non2xx} non-2xx, ${load.errors} errors)`);
      } finally {
        await service.stop();
      }
      const steady = cli.samples.slice(Math.floor(cli.samples.length / 10)); // after the first tenth: start-up and the first pages
      const line = {
        round,
        cliRowsPerSecond: opts.rows / cli.seconds,
        autocannonRowsPerSecond: opts.rows / load.seconds,
        ratio: load.seconds / cli.seconds,
        cliPeakRssMb: cli.peak,
        cliRssMb: { p10: pct(steady, 10), p50: pct(steady, 50), p90: pct(steady, 90), max: Math.max(...steady) },
        autocannonP99Ms: load.p99,
      };
      lines.push(line);
      console.log(JSON.stringify(line));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const f = (n, d = 0) => n.toFixed(d);
  console.log(
    [
      '',
      `rows ${opts.rows}, concurrency/connections ${opts.concurrency}${opts['cli-heap'] ? `, CLI heap ${opts['cli-heap']} MB` : ''}, Node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, ` +
        `service ${hasTaskset ? 'on CPU 0, clients on the others' : 'not pinned'}, SQLite`,
      '',
      '| round | CLI rows/s | autocannon rows/s | CLI/autocannon | CLI peak RSS MB | CLI RSS MB p10 / p50 / p90 / max (after the first tenth) |',
      '|--:|--:|--:|--:|--:|--|',
      ...lines.map(
        (l) =>
          `| ${l.round} | ${f(l.cliRowsPerSecond)} | ${f(l.autocannonRowsPerSecond)} | ${f(l.ratio, 2)} | ${f(l.cliPeakRssMb, 1)} | ` +
          `${f(l.cliRssMb.p10, 1)} / ${f(l.cliRssMb.p50, 1)} / ${f(l.cliRssMb.p90, 1)} / ${f(l.cliRssMb.max, 1)} |`,
      ),
      '',
    ].join('\n'),
  );
}

await main();
