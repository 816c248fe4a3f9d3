// MCP throughput benchmark (issue 23, docs/decisions/0031-mcp-throughput.md). Not part of CI.
// Usage (after `npm run build`; `npm run bench:mcp -- …` builds when stale):
//   node bench/mcp.mjs [--quick] [--rounds 5] [--duration 8] [--connections 50] [--warmup 1] [--service FILE]
//                      [--sides sandbox,legacy,modern]
// One service (dist/server.mjs, or FILE: another build's server.mjs, for a "before" row), pinned to CPU 0; autocannon
// on the other core. In each round, against that same process and with the same lead, alternating which goes first:
//   - sandbox: POST /api/v1/sandbox (the REST way to validate a lead, the reference);
//   - legacy:  POST /mcp tools/call validate_lead with MCP-Protocol-Version 2025-11-25 (what bench/run.mjs measures);
//   - modern:  POST /mcp tools/call validate_lead in 2026-07-28 (Mcp-Method / Mcp-Name headers, _meta in the body).
// Reports each side's req/s and p99 per round, and the medians over rounds of the paired ratios MCP/sandbox of req/s
// (target ≥ 0.5) and of p99 (target ≤ 2). Every answer is checked before the load starts; a non-2xx fails the run.
// Also the service's CPU time per request (/proc/PID/stat over the measured seconds) and sandbox's ÷ MCP's: what the
// req/s ratio would be on a core of its own, and much steadier than req/s when other processes share the machine.
// --quick: 2 rounds of 4 s; to check that a run works, not to quote. SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'
// profiles the service (bench/support.mjs); bench/cpuprofile-summary.mjs summarises the profiles.
// Prints a Markdown section for bench/RESULTS.md on stdout; progress on stderr.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { LEAD, hasTaskset, median, startService } from './support.mjs';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const MCP_ACCEPT = 'application/json, text/event-stream';

const SIDES = {
  sandbox: {
    title: 'POST /api/v1/sandbox',
    path: '/api/v1/sandbox',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(LEAD),
    check: (status, body) => status === 200 && body?.valid === true,
  },
  legacy: {
    title: 'MCP tools/call validate_lead (2025-11-25)',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'validate_lead', arguments: LEAD } }),
    check: (status, body) => status === 200 && body?.result?.isError === false && body.result.structuredContent?.valid === true,
  },
  modern: {
    title: 'MCP tools/call validate_lead (2026-07-28)',
    path: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: MCP_ACCEPT,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'validate_lead',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'validate_lead', arguments: LEAD, _meta: MODERN_META } }),
    check: (status, body) => status === 200 && body?.result?.isError === false && body.result.structuredContent?.valid === true,
  },
};

function parseArgs(argv) {
  const options = { rounds: 5, duration: 8, connections: 50, warmup: 1, quick: false, service: undefined, sides: Object.keys(SIDES) };
  const given = new Set();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    given.add(flag);
    const value = () => inline ?? argv[++i];
    if (['--rounds', '--duration', '--connections', '--warmup'].includes(flag)) {
      const number = Number(value());
      if (!Number.isFinite(number) || number < 0 || (flag !== '--warmup' && number < 1)) throw new Error(`${flag} needs a positive number`);
      options[flag.slice(2)] = number;
    } else if (flag === '--service') options.service = resolve(value());
    else if (flag === '--quick') options.quick = true;
    else if (flag === '--sides') {
      options.sides = value().split(',');
      if (!options.sides.every((name) => name in SIDES)) throw new Error(`--sides takes ${Object.keys(SIDES).join(',')}`);
    } else throw new Error(`unknown option ${flag}; see the head of bench/mcp.mjs`);
  }
  if (options.quick) {
    if (!given.has('--rounds')) options.rounds = 2;
    if (!given.has('--duration')) options.duration = 4;
  }
  return options;
}

const log = (line) => process.stderr.write(`${line}\n`);

/** The JSON of an answer sent as application/json or as one SSE event. */
function jsonOf(text) {
  try {
    return JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text);
  } catch {
    return undefined;
  }
}

function runLoad(options) {
  return new Promise((done, fail) => autocannon(options, (error, result) => (error ? fail(error) : done(result))));
}

/** CPU time (user + system, ms) the process has used: /proc/PID/stat's utime and stime, in clock ticks of 10 ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(service, side, opts) {
  const load = { url: service.base + side.path, method: 'POST', headers: side.headers, body: side.body, connections: opts.connections };
  if (opts.warmup > 0) await runLoad({ ...load, duration: opts.warmup });
  const cpuBefore = cpuMs(service.pid);
  const result = await runLoad({ ...load, duration: opts.duration });
  const cpu = cpuMs(service.pid) - cpuBefore;
  if (result.non2xx || result.errors || result.timeouts)
    throw new Error(`${side.title}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, p99: result.latency.p99, cpuUs: (1000 * cpu) / result.requests.total };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  // autocannon keeps to the other core(s); the service is pinned to CPU 0 by startService.
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
  const load1 = loadavg()[0];
  const service = await startService(dataDir, {}, opts.service);
  const rounds = [];
  try {
    for (const name of opts.sides) {
      const side = SIDES[name];
      const res = await fetch(service.base + side.path, { method: 'POST', headers: side.headers, body: side.body });
      const text = await res.text();
      if (!side.check(res.status, jsonOf(text))) throw new Error(`${name}: unexpected answer ${res.status} ${text.slice(0, 500)}`);
    }
    const names = opts.sides;
    for (let round = 1; round <= opts.rounds; round++) {
      // Rotate the order, so that no side always gets the warmer (or the busier) moment of the machine.
      const order = names.map((_, i) => names[(i + round - 1) % names.length]);
      const pair = {};
      for (const name of order) {
        pair[name] = await measure(service, SIDES[name], opts);
        const m = pair[name];
        log(
          `round ${round}/${opts.rounds} ${name.padEnd(7)} ${Math.round(m.rps)} req/s, p99 ${m.p99} ms, ${Math.round(m.cpuUs)} µs CPU/request (load ${loadavg()[0].toFixed(2)})`,
        );
      }
      rounds.push(pair);
    }
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const ratio = (name, key) => median(rounds.map((pair) => pair[name][key] / pair.sandbox[key]));
  const row = (name) => {
    const rps = median(rounds.map((pair) => pair[name].rps));
    const p99 = median(rounds.map((pair) => pair[name].p99));
    const perRound = rounds.map((pair) => Math.round(pair[name].rps)).join(' / ');
    const cpuUs = median(rounds.map((pair) => pair[name].cpuUs));
    const ratios =
      name === 'sandbox' || !rounds[0].sandbox
        ? ' |  | '
        : `${ratio(name, 'rps').toFixed(2)} | ${ratio(name, 'p99').toFixed(2)} | ${(1 / ratio(name, 'cpuUs')).toFixed(2)}`;
    return `| ${SIDES[name].title} | ${perRound} | ${Math.round(rps)} | ${p99} | ${Math.round(cpuUs)} | ${ratios} |`;
  };
  const verdict = (name) => {
    const rps = ratio(name, 'rps');
    const p99 = ratio(name, 'p99');
    return `${SIDES[name].title}: req/s ratio ${rps.toFixed(2)} (target ≥ 0.5, ${rps >= 0.5 ? 'met' : 'missed'}), p99 ratio ${p99.toFixed(2)} (target ≤ 2, ${p99 <= 2 ? 'met' : 'missed'}).`;
  };
  process.stdout.write(
    [
      `### MCP tools/call validate_lead against POST /api/v1/sandbox (bench/mcp.mjs, ${new Date().toISOString().slice(0, 10)})`,
      '',
      `\`node bench/mcp.mjs ${process.argv.slice(2).join(' ')}\`${opts.service ? ` (service ${opts.service})` : ''}: one service, ${opts.rounds} rounds of ` +
        `${opts.duration} s per side (after ${opts.warmup} s warm-up), ${opts.connections} connections, sides alternated; Node ${process.version}, ` +
        `${cpus().length} CPUs${hasTaskset ? ' (service pinned to CPU 0, autocannon on the others)' : ''}; load average ${load1.toFixed(2)} at the start, ` +
        `${loadavg()[0].toFixed(2)} at the end. Ratios: medians over rounds of each round's MCP value ÷ the sandbox value of the same round ` +
        `(CPU: sandbox's ÷ MCP's).`,
      '',
      '| side | req/s per round | median req/s | median p99 ms | service CPU µs/request | req/s ÷ sandbox | p99 ÷ sandbox | sandbox CPU ÷ this CPU |',
      '|---|---|--:|--:|--:|--:|--:|--:|',
      ...opts.sides.map(row),
      '',
      ...(opts.sides.includes('sandbox') ? opts.sides.filter((name) => name !== 'sandbox').map((name) => `- ${verdict(name)}`) : []),
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
