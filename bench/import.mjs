// `leads import` of a file with an operator login, against posting the same rows with autocannon (out of CI).
// Usage (after `npm run build`): node bench/import.mjs [--rows 100000] [--concurrency 8] [--rounds 1] [--cli-heap MB]
// Each run starts a fresh service (SQLite in a fresh DATA_DIR; pinned to CPU 0 when taskset is there, the client on the
// other cores), creates an operator client with the clients:create command, and sends the same rows: once with the CLI
// (`leads login` then `leads import rows.csv --concurrency N`; its resident memory sampled every 100 ms), once with
// autocannon (N connections, one row per request with the same Idempotency-Key the CLI derives, the operator token).
// Prints rows/s, the CLI's peak RSS and RSS through the run (flat memory), and the ratio CLI/autocannon. --cli-heap runs
// the CLI with --max-old-space-size=MB: what it keeps alive fits in that, whatever the file's size.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { clientCredentialsToken, createOperatorClient, hasTaskset, memory, percentile, ROOT, startService } from './support.mjs';

const CLI = join(ROOT, 'dist/cli/leads.cjs');

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

/** A fresh service on a fresh data directory, with an operator client that may write leads. */
async function startFresh() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const service = await startService(dataDir);
  const client = createOperatorClient(service, 'bench import', 'leads:write');
  const stored = () => {
    const db = new Database(join(dataDir, 'leads.sqlite'), { readonly: true });
    try {
      return db.prepare("SELECT COUNT(*) AS n FROM leads WHERE origem = 'bench-import'").get().n;
    } finally {
      db.close();
    }
  };
  const stop = async () => {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { base: service.base, client, stored, stop, token: () => clientCredentialsToken(service, client) };
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
    samples.push(m.rssMb);
    peak = Math.max(peak, m.peakMb);
  }, 100);
  const [code] = await once(child, 'exit');
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`leads import exited ${code}: ${tail}`);
  const stored = Number(/(\d+) stored, \d+ already stored/.exec(tail)?.[1]);
  return { seconds, stored, peak, samples };
}

async function runAutocannon(service, opts) {
  const token = await service.token();
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
                headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': idempotencyKey(fields) },
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

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const work = mkdtempSync(join(tmpdir(), 'bench-import-work-'));
  const file = join(work, 'rows.csv');
  await writeRows(file, opts.rows);
  const lines = [];
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      let service = await startFresh();
      let cli;
      try {
        cli = await runCli(service, file, opts, work);
        if (service.stored() !== opts.rows || cli.stored !== opts.rows)
          throw new Error(`the CLI stored ${cli.stored} (${service.stored()} in the database) of ${opts.rows}`);
      } finally {
        await service.stop();
      }
      service = await startFresh();
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
        cliRssMb: { p10: percentile(steady, 10), p50: percentile(steady, 50), p90: percentile(steady, 90), max: Math.max(...steady) },
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
