// Side-by-side benchmarks of the service against the bare baseline (bench/baseline.mjs), with autocannon.
// Usage (after `npm run build`): node bench/run.mjs [--duration 10] [--rounds 3] [--connections 50] [--warmup 1]
//                                                  [--only lead,health] [--out bench/RESULTS.md]
//        node bench/run.mjs --against FILE [--bar 0.95] [--only lead] [--rounds 5] [--duration 20] [--warmup 3]
// --against FILE (another build's dist/server.mjs): the paired method of bench/RESULTS.md ("Method"), and nothing
// written: per pair, this build and FILE one after the other (the first of each pair alternating), each a fresh process
// on CPU 0 alone; each pair's ratio this ÷ FILE of req/s and of CPU time per request, the medians with their spread
// (min–max) and, with --bar, the verdict: met, not met, or inconclusive when the spread crosses the bar. Prints a
// Markdown block for bench/RESULTS.md. Defaults there: 5 pairs of 20 s after 3 s of warm-up, fewer is not the method.
// --env KEY=VALUE (repeatable) sets a variable for this build's service, --against-env for FILE's: with FILE this same
// build, the paired cost of a setting (`--against dist/server.mjs --env METRICS_PORT=0`). OTEL_EXPORTER_OTLP_ENDPOINT=sink
// points a side at an OTLP/HTTP sink the bench runs itself, which answers every export at once.
// SQLite by default; with TEST_DATABASE_URL the service runs on PostgreSQL (the baseline always stays on SQLite).
// The lead scenario also runs the baseline with GROUP_COMMIT=1 (one commit per event-loop turn, as the service does).
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../scripts/free-port.mjs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMs, LEAD, PAIRED, spread, verdict } from './support.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICE = join(ROOT, 'dist/server.mjs');
const BASELINE = join(ROOT, 'bench/baseline.mjs');
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const HEALTH_TIMEOUT_MS = 30_000;

const JSON_HEADERS = { 'content-type': 'application/json' };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

// ---------------------------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
  const options = {
    duration: 10,
    rounds: 3,
    connections: 50,
    warmup: 1,
    only: undefined,
    out: join(ROOT, 'bench/RESULTS.md'),
    against: undefined,
    bar: undefined,
    env: {},
    againstEnv: {},
  };
  const given = new Set();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    given.add(flag);
    switch (flag) {
      case '--duration':
      case '--rounds':
      case '--connections':
      case '--warmup': {
        const number = Number(value());
        if (!Number.isFinite(number) || number < 0 || (flag !== '--warmup' && number < 1)) throw new Error(`${flag} needs a positive number`);
        options[flag.slice(2)] = number;
        break;
      }
      case '--only':
        options.only = value()
          .split(',')
          .map((name) => name.trim());
        break;
      case '--out':
        options.out = resolve(value());
        break;
      case '--against':
        options.against = resolve(value());
        break;
      case '--env':
      case '--against-env': {
        const pair = argv[i].includes('=') && inline !== undefined ? argv[i].slice(flag.length + 1) : value();
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`${flag} needs KEY=VALUE`);
        options[flag === '--env' ? 'env' : 'againstEnv'][pair.slice(0, at)] = pair.slice(at + 1);
        break;
      }
      case '--bar':
        options.bar = Number(value());
        if (!(options.bar > 0)) throw new Error('--bar needs a positive ratio, such as 0.95');
        break;
      default:
        throw new Error(`Unknown option ${argv[i]}; see the head of bench/run.mjs`);
    }
  }
  if (options.against) {
    // The method of bench/RESULTS.md unless told otherwise (then the output says it is not the method).
    if (!given.has('--rounds')) options.rounds = PAIRED.pairs;
    if (!given.has('--duration')) options.duration = PAIRED.seconds;
    if (!given.has('--warmup')) options.warmup = PAIRED.warmup;
    if (!given.has('--only')) options.only = ['lead'];
  }
  return options;
}

let autocannonVersion = 'unknown';

/** autocannon is a devDependency; AUTOCANNON_DIR (a folder with node_modules/autocannon) is a fallback for trying it out. */
async function loadAutocannon() {
  try {
    const autocannon = (await import('autocannon')).default;
    autocannonVersion = packageVersion('autocannon');
    return autocannon;
  } catch (error) {
    if (!process.env.AUTOCANNON_DIR) throw new Error(`autocannon is not installed (npm install -D autocannon): ${error.message}`, { cause: error });
    const require = createRequire(join(resolve(process.env.AUTOCANNON_DIR), 'noop.js'));
    autocannonVersion = `${require('autocannon/package.json').version} (from AUTOCANNON_DIR)`;
    return require('autocannon');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

const hasTaskset = spawnSync('taskset', ['-V']).status === 0 && cpus().length > 1;

let sink;
/** An OTLP/HTTP collector that takes every export and keeps nothing (one per bench run): what tracing costs the service alone. */
async function otlpSink() {
  sink ??= await new Promise((resolveSink) => {
    const server = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolveSink(`http://127.0.0.1:${server.address().port}`);
    });
  });
  return sink;
}

/** Spawns a server (pinned to CPU 0 when taskset is there), waits for its first healthy answer. */
async function startServer(kind, script = kind === 'service' ? SERVICE : BASELINE, extraEnv = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${kind}-`));
  const base = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', PORT: String(port), DATA_DIR: dataDir };
  if (kind === 'baseline-gc') env.GROUP_COMMIT = '1';
  if (script !== BASELINE) {
    Object.assign(env, {
      PUBLIC_BASE_URL: base,
      LOG_LEVEL: 'warn',
      // Far beyond any load here, so limits never trigger; the agent quota must be ≥ 10× the anonymous one.
      RATE_LIMIT_ANONYMOUS: '100000000/1s',
      RATE_LIMIT_AGENT: '1000000000/1s',
      RATE_LIMIT_REGISTRATION: '100000000/1s',
      RATE_LIMIT_TOKEN: '100000000/1s',
    });
    for (const [key, value] of Object.entries(extraEnv)) env[key] = key === 'OTEL_EXPORTER_OTLP_ENDPOINT' && value === 'sink' ? await otlpSink() : value;
    if (process.env.TEST_DATABASE_URL) {
      env.DATABASE_URL = process.env.TEST_DATABASE_URL;
      // Required on PostgreSQL. One fixed key for every run: they share the schema, and the signing keys the first sealed.
      env.SECRETS_KEY = process.env.SECRETS_KEY ?? Buffer.alloc(32, 'bench secrets key').toString('base64');
    }
  }
  // SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the servers (as in bench/support.mjs).
  const nodeArgs = process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const [command, args] = hasTaskset ? ['taskset', ['-c', '0', process.execPath, ...nodeArgs, script]] : [process.execPath, [...nodeArgs, script]];
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  let exited = false;
  child.once('exit', () => (exited = true));

  for (;;) {
    if (exited) throw new Error(`${kind} exited before it was healthy:\n${stderr}`);
    if (performance.now() - started > HEALTH_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`${kind} not healthy after ${HEALTH_TIMEOUT_MS} ms:\n${stderr}`);
    }
    try {
      const res = await fetch(`${base}/api/v1/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  const healthyMs = performance.now() - started;

  const stop = async () => {
    const peakRssMb = readPeakRss(child.pid);
    if (!exited) {
      const gone = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
    return { peakRssMb, stderr };
  };
  // taskset execs node, so the pid is the server's own.
  return { base, healthyMs, stop, pid: child.pid };
}

/** VmHWM: the peak resident set size of the process, in MB. */
function readPeakRss(pid) {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Scenarios

async function call(base, path, init) {
  const res = await fetch(base + path, init);
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

async function registerAndExchange(base) {
  const reg = await call(base, '/api/v1/agent/identity', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ type: 'anonymous', client_name: 'bench' }),
  });
  if (reg.status !== 200) throw new Error(`registration answered ${reg.status}: ${JSON.stringify(reg.body)}`);
  const form = new URLSearchParams({ grant_type: JWT_BEARER, assertion: reg.body.identity_assertion }).toString();
  const tok = await call(base, '/oauth2/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  if (tok.status !== 200) throw new Error(`token exchange answered ${tok.status}: ${JSON.stringify(tok.body)}`);
  return tok.body.access_token;
}

const leadBody = JSON.stringify(LEAD);
const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'validate_lead', arguments: LEAD } });

/**
 * Each scenario: `baseline` when bench/baseline.mjs serves it too; `prepare(base)` returns the autocannon options
 * (after any setup against that process); `check(res)` validates one sample answer before the load starts.
 */
const SCENARIOS = [
  {
    name: 'lead',
    title: 'POST /api/v1/lead (anonymous)',
    baseline: true,
    groupCommitBaseline: true,
    prepare: () => ({ method: 'POST', path: '/api/v1/lead', headers: JSON_HEADERS, body: leadBody }),
    check: (res) => res.status === 201 && typeof res.body.id === 'string',
  },
  {
    name: 'lead-bearer',
    title: 'POST /api/v1/lead (bearer token)',
    // Its target (bench/RESULTS.md, Where the targets stand) is a ratio to the anonymous lead baseline.
    compareWith: 'lead',
    prepare: async (base) => {
      const token = await registerAndExchange(base);
      return { method: 'POST', path: '/api/v1/lead', headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: leadBody };
    },
    check: (res) => res.status === 201 && typeof res.body.id === 'string',
  },
  {
    name: 'sandbox',
    title: 'POST /api/v1/sandbox',
    prepare: () => ({ method: 'POST', path: '/api/v1/sandbox', headers: JSON_HEADERS, body: leadBody }),
    check: (res) => res.status >= 200 && res.status < 300,
  },
  {
    name: 'health',
    title: 'GET /api/v1/health',
    baseline: true,
    prepare: () => ({ method: 'GET', path: '/api/v1/health' }),
    check: (res) => res.status === 200 && res.body.status === 'ok',
  },
  {
    name: 'register-token',
    title: 'register + token exchange (2 requests each)',
    prepare: () => ({
      requests: [
        {
          method: 'POST',
          path: '/api/v1/agent/identity',
          headers: JSON_HEADERS,
          body: JSON.stringify({ type: 'anonymous', client_name: 'bench' }),
          onResponse: (status, body, context) => {
            if (status === 200) context.assertion = JSON.parse(body).identity_assertion;
          },
        },
        {
          method: 'POST',
          path: '/oauth2/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          setupRequest: (req, context) => ({
            ...req,
            body: new URLSearchParams({ grant_type: JWT_BEARER, assertion: context.assertion ?? 'missing' }).toString(),
          }),
        },
      ],
    }),
    sample: async (base) => ({ status: (await registerAndExchange(base)) ? 200 : 500, body: {} }),
    check: (res) => res.status === 200,
  },
  {
    name: 'graphql',
    title: 'POST /api/v1/graphql `{ health { status } }`',
    prepare: () => ({ method: 'POST', path: '/api/v1/graphql', headers: JSON_HEADERS, body: JSON.stringify({ query: '{ health { status } }' }) }),
    check: (res) => res.status === 200 && res.body?.data?.health?.status === 'ok',
  },
  {
    name: 'mcp',
    title: 'POST /mcp tools/call validate_lead',
    prepare: () => ({ method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: mcpBody }),
    check: (res) => res.status === 200 && mcpResult(res.body)?.isError === false,
  },
];

/** The result of a JSON-RPC answer sent as application/json or as one SSE event. */
function mcpResult(body) {
  if (typeof body === 'object') return body?.result;
  const data = /^data: (.*)$/m.exec(String(body))?.[1];
  try {
    return data ? JSON.parse(data).result : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement

function runLoad(autocannon, options) {
  return new Promise((done, fail) => {
    autocannon(options, (error, result) => (error ? fail(error) : done(result)));
  });
}

/** The autocannon options of a scenario against a running server, after its sample answer has been checked. */
async function prepareLoad(scenario, kind, server, opts) {
  const load = await scenario.prepare(server.base);
  const sampleRequest = load.requests ? undefined : { method: load.method, headers: load.headers, body: load.body };
  const sample = scenario.sample ? await scenario.sample(server.base) : await call(server.base, load.path, sampleRequest);
  if (!scenario.check(sample))
    throw new Error(`${kind} ${scenario.name}: unexpected sample answer ${sample.status} ${JSON.stringify(sample.body).slice(0, 500)}`);
  // autocannon takes the path as part of url; a `requests` sequence carries its own paths.
  const { path, ...rest } = load;
  return { url: server.base + (path ?? ''), connections: opts.connections, ...rest };
}

async function measure(autocannon, scenario, kind, opts) {
  const server = await startServer(kind, undefined, kind === 'service' ? opts.env : {});
  try {
    const common = await prepareLoad(scenario, kind, server, opts);
    if (opts.warmup > 0) await runLoad(autocannon, { ...common, duration: opts.warmup });
    const result = await runLoad(autocannon, { ...common, duration: opts.duration });
    const { peakRssMb, stderr } = await server.stop();
    if (stderr.trim()) console.error(`[${kind} ${scenario.name} stderr]\n${stderr.trim().slice(-1000)}`);
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      rssMb: peakRssMb,
      healthyMs: server.healthyMs,
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** One side of a pair: a fresh process on CPU 0 alone, loaded after its warm-up; req/s, p99 and CPU µs per request. */
async function measureAlone(autocannon, scenario, kind, script, opts) {
  const server = await startServer(kind, script, kind === 'this' ? opts.env : kind === 'against' ? opts.againstEnv : {});
  try {
    const load = await prepareLoad(scenario, kind, server, opts);
    if (opts.warmup > 0) await runLoad(autocannon, { ...load, duration: opts.warmup });
    const cpuBefore = cpuMs(server.pid);
    const result = await runLoad(autocannon, { ...load, duration: opts.duration });
    const cpu = cpuMs(server.pid) - cpuBefore;
    if (result.non2xx || result.errors || result.timeouts)
      throw new Error(`${kind} ${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    return { rps: result.requests.average, p99: result.latency.p99, cpuUs: (1000 * cpu) / result.requests.total };
  } finally {
    const { stderr } = await server.stop();
    if (stderr.trim()) console.error(`[${kind} stderr]\n${stderr.trim().slice(-1000)}`);
  }
}

const load1 = () => loadavg()[0].toFixed(2);

/** --against: the paired method of bench/RESULTS.md; prints each pair, the medians with their spread, and a block to paste. */
async function compare(autocannon, scenarios, opts) {
  const method = opts.rounds >= PAIRED.pairs && opts.duration >= PAIRED.seconds;
  // A quick look gets no verdict: only the method's pairs can meet a bar.
  const bar = method ? opts.bar : undefined;
  const other = opts.against;
  const started = `load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')}`;
  const blocks = [];
  for (const scenario of scenarios) {
    const pairs = [];
    for (let pair = 1; pair <= opts.rounds; pair++) {
      const loadBefore = load1();
      // The first of each pair alternates, so that neither side always gets the warmer (or the busier) moment.
      const order = pair % 2 ? ['this', 'against'] : ['against', 'this'];
      const m = {};
      for (const side of order) m[side] = await measureAlone(autocannon, scenario, side, side === 'this' ? SERVICE : other, opts);
      const row = { pair, first: order[0], ...m, rps: m.this.rps / m.against.rps, cpu: m.against.cpuUs / m.this.cpuUs, load: `${loadBefore} → ${load1()}` };
      pairs.push(row);
      console.error(
        `pair ${pair}/${opts.rounds} ${scenario.name}: this ${Math.round(m.this.rps)} req/s, p99 ${m.this.p99} ms, ${Math.round(m.this.cpuUs)} µs CPU/request; ` +
          `against ${Math.round(m.against.rps)} req/s, p99 ${m.against.p99} ms, ${Math.round(m.against.cpuUs)} µs CPU/request; ` +
          `this ÷ against: req/s ${row.rps.toFixed(3)}, CPU ${row.cpu.toFixed(3)} (load ${row.load})`,
      );
    }
    const rps = pairs.map((p) => p.rps);
    const cpu = pairs.map((p) => p.cpu);
    blocks.push(
      [
        `| pair | first | this req/s | against req/s | this p99 ms | against p99 ms | this CPU µs/req | against CPU µs/req | req/s ratio | CPU ratio | load 1 min |`,
        '|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
        ...pairs.map(
          (p) =>
            `| ${p.pair} | ${p.first} | ${Math.round(p.this.rps)} | ${Math.round(p.against.rps)} | ${p.this.p99} | ${p.against.p99} | ${Math.round(p.this.cpuUs)} | ` +
            `${Math.round(p.against.cpuUs)} | ${p.rps.toFixed(3)} | ${p.cpu.toFixed(3)} | ${p.load} |`,
        ),
        '',
        `**${scenario.title}**, this ÷ against: req/s **${median(rps).toFixed(3)}** (${spread(rps)})${verdict(rps, bar)}; ` +
          `CPU per request (against ÷ this) ${median(cpu).toFixed(3)} (${spread(cpu)})${verdict(cpu, bar)}.`,
      ].join('\n'),
    );
  }
  const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'SQLite';
  process.stdout.write(
    [
      `\`node bench/run.mjs ${process.argv.slice(2).join(' ')}\`, ${new Date().toISOString()}: this = ${SERVICE}, against = ${other}; ` +
        `${opts.rounds} pairs of ${opts.duration} s after ${opts.warmup} s of warm-up, ${opts.connections} connections, ${database}; Node ${process.version}, ` +
        `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}${hasTaskset ? ', servers on CPU 0, autocannon on the others' : ', not pinned'}; ` +
        `${started} at the start, ${load1()} at the end.${method ? '' : ` **Not the method of bench/RESULTS.md (at least ${PAIRED.pairs} pairs of ${PAIRED.seconds} s): a quick look only.**`}`,
      '',
      ...blocks,
      '',
    ].join('\n'),
  );
}

function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function summarise(samples) {
  const keys = ['rps', 'p50', 'p99', 'non2xx', 'errors', 'rssMb', 'healthyMs'];
  return Object.fromEntries(keys.map((key) => [key, median(samples.map((s) => s[key]))]));
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

const fmt = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

function table(rows) {
  const lines = [
    '| Scenario | Server | req/s | p50 ms | p99 ms | non-2xx | errors | peak RSS MB | first healthy ms | service/baseline req/s | service/group-commit baseline req/s |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const row of rows) {
    const ratio = row.ratio === undefined ? '' : fmt(row.ratio, 2);
    const groupCommitRatio = row.groupCommitRatio === undefined ? '' : fmt(row.groupCommitRatio, 2);
    lines.push(
      `| ${row.title} | ${row.label} | ${fmt(row.m.rps)} | ${fmt(row.m.p50, 1)} | ${fmt(row.m.p99, 1)} | ${fmt(row.m.non2xx)} | ${fmt(row.m.errors)} | ${fmt(row.m.rssMb, 1)} | ${fmt(row.m.healthyMs)} | ${ratio} | ${groupCommitRatio} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const autocannon = await loadAutocannon();
  // The load generator keeps to the other core(s) when the servers are pinned to CPU 0.
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const scenarios = opts.only ? SCENARIOS.filter((s) => opts.only.includes(s.name)) : SCENARIOS;
  if (!scenarios.length) throw new Error(`--only matched nothing; scenarios are ${SCENARIOS.map((s) => s.name).join(', ')}`);
  if (opts.against) return compare(autocannon, scenarios, opts);
  const database = process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'SQLite';

  const samples = new Map();
  const record = (key, value) => samples.set(key, [...(samples.get(key) ?? []), value]);
  for (let round = 1; round <= opts.rounds; round++) {
    for (const scenario of scenarios) {
      // Alternate which goes first, so neither always gets the warmer machine.
      const kinds = ['service', ...(scenario.baseline ? ['baseline'] : []), ...(scenario.groupCommitBaseline ? ['baseline-gc'] : [])];
      if (round % 2 === 0) kinds.reverse();
      for (const kind of kinds) {
        const m = await measure(autocannon, scenario, kind, opts);
        record(`${scenario.name}:${kind}`, m);
        console.log(
          `round ${round}/${opts.rounds} ${scenario.name.padEnd(14)} ${kind.padEnd(11)} ${fmt(m.rps).padStart(6)} req/s  p50 ${fmt(m.p50, 1)} ms  p99 ${fmt(m.p99, 1)} ms  non-2xx ${m.non2xx}  errors ${m.errors}  RSS ${fmt(m.rssMb, 1)} MB  healthy ${fmt(m.healthyMs)} ms`,
        );
      }
    }
  }

  const rows = [];
  for (const scenario of scenarios) {
    const serviceRuns = samples.get(`${scenario.name}:service`);
    const baselineRuns = samples.get(`${scenario.name}:baseline`);
    // Each round's service run is paired with the baseline run beside it, so that a machine that speeds up or slows
    // down between rounds moves both sides of a ratio together.
    const pairedRatio = (reference) => (reference ? median(serviceRuns.map((run, round) => run.rps / reference[round].rps)) : undefined);
    const groupCommitRuns = samples.get(`${scenario.name}:baseline-gc`) ?? samples.get(`${scenario.compareWith}:baseline-gc`);
    rows.push({
      title: scenario.title,
      label: `service (${database})`,
      m: summarise(serviceRuns),
      ratio: pairedRatio(baselineRuns ?? samples.get(`${scenario.compareWith}:baseline`)),
      groupCommitRatio: pairedRatio(groupCommitRuns),
    });
    if (baselineRuns) rows.push({ title: scenario.title, label: 'baseline (SQLite)', m: summarise(baselineRuns) });
    const ownGroupCommitRuns = samples.get(`${scenario.name}:baseline-gc`);
    if (ownGroupCommitRuns) rows.push({ title: scenario.title, label: 'baseline, group commit (SQLite)', m: summarise(ownGroupCommitRuns) });
  }
  const markdown = table(rows);
  console.log(`\n${markdown}\n`);

  const cpu = cpus();
  const report = [
    '# Benchmark results',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Node ${process.version}; CPU: ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} cores`,
    `- @nestjs/core ${packageVersion('@nestjs/core')}, typeorm ${packageVersion('typeorm')}, better-sqlite3 ${packageVersion('better-sqlite3')}, autocannon ${autocannonVersion}`,
    `- Command: \`node bench/run.mjs ${process.argv.slice(2).join(' ')}\`: ${opts.rounds} round(s) × ${opts.duration} s per scenario (after ${opts.warmup} s warm-up), ${opts.connections} connections; medians over rounds`,
    `- Service database: ${database}; the baseline always uses SQLite (WAL, synchronous=NORMAL). Each measurement is a fresh process with a fresh DATA_DIR.`,
    `- Servers ${hasTaskset ? 'pinned to CPU 0 with taskset, autocannon on the other core(s)' : 'not pinned (taskset unavailable or one core)'}; rate limits set far beyond the load; LOG_LEVEL=warn.`,
    "- service/baseline: the median over rounds of each round's service req/s divided by the baseline req/s of the same round.",
    '- The bearer lead ratio is to the anonymous lead baseline (the baseline has no tokens).',
    '- Baseline: a commit per lead (bench/baseline.mjs); group-commit baseline: the same with one commit per event-loop turn, as the service stores leads since 2026-11-24.',
    '- register + token: each iteration is two requests (registration, then exchange); req/s counts both.',
    '',
    markdown,
    '',
  ].join('\n');
  writeFileSync(opts.out, report + keptNotes(opts.out));
  console.log(`Written to ${opts.out}`);
}

/** What follows this line in the results file is written by hand (what each change bought) and survives a new run. */
const NOTES_MARKER = '<!-- Notes: kept when bench/run.mjs rewrites the table above. -->';

function keptNotes(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const at = text.indexOf(NOTES_MARKER);
  return at === -1 ? '' : `\n${text.slice(at)}`;
}

await main();
