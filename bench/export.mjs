// Export benchmark (issue 20): GET /api/v1/leads/export over a SQLite database of --rows leads. Not part of CI.
// Usage (after `npm run build`; `npm run bench:export -- …` builds when stale):
//   node bench/export.mjs [--rows 1000000] [--format csv] [--page-size N] [--duration 10] [--rounds 3] [--rate 1000]
//                         [--connections 10] [--query 'delimiter=;&columns=all']
// 1. seeds --rows leads straight into a fresh SQLite file (the service's own migrations make the schema first; then
//    prepared INSERTs in transactions of 50,000 rows), 2. starts dist/server.mjs on it (pinned to CPU 0 when taskset is
//    there; the clients are not pinned) with an operator client from clients:create (leads:export), 3. exports once alone: rows/s, bytes/s, time to first byte, the
//    server's peak RSS (VmHWM), 4. loads POST /api/v1/lead with autocannon at a fixed --rate for --duration seconds,
//    without and then with exports running back to back, --rounds times, and reports the median intake p99 of each
//    and their ratio. --query adds parameters to the export's URL (the pt-BR profile: `delimiter=;`, with every
//    column and so every date-time: `delimiter=;&columns=all`).
// The export client is a child process (bench/export-client.mjs) so that reading the file does not delay autocannon's
// own clock. Targets (issue 20): ≥ 100,000 rows/s on SQLite, peak RSS ≤ 200 MB, intake p99 during export ≤ 2× without.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { hasTaskset, median, memory, operatorToken, ROOT, seedSqlite, startService } from './support.mjs';

const CLIENT = join(ROOT, 'bench/export-client.mjs');
const EXPORT_TIMEOUT_MS = 300_000;

function parseArgs(argv) {
  const options = { rows: 1_000_000, format: 'csv', pageSize: undefined, duration: 10, rounds: 3, rate: 1000, connections: 10, query: '' };
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
    else if (flag === '--query') options.query = value();
    else throw new Error(`Unknown option ${argv[i]}; see the head of bench/export.mjs`);
  }
  return options;
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

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-export-'));
  const file = join(dataDir, 'leads.sqlite');
  let service;
  try {
    // The service makes the schema (its migrations), then stops; the rows go in directly.
    await (await startService(dataDir)).stop();
    const seedSeconds = seedSqlite(file, opts.rows);
    console.log(`seeded ${opts.rows} leads in ${seedSeconds.toFixed(1)} s (${Math.round(opts.rows / seedSeconds)} rows/s)`);

    service = await startService(dataDir, opts.pageSize ? { EXPORT_PAGE_SIZE: String(opts.pageSize) } : {});
    const token = await operatorToken(service, 'bench export', 'leads:export');
    const url = `${service.base}/api/v1/leads/export?format=${opts.format}${opts.query ? `&${opts.query}` : ''}`;
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
        `\`node bench/export.mjs --rows ${opts.rows} --format ${opts.format}${opts.query ? ` --query '${opts.query}'` : ''}${opts.pageSize ? ` --page-size ${opts.pageSize}` : ''} --duration ${opts.duration} --rounds ${opts.rounds} --rate ${opts.rate} --connections ${opts.connections}\`${hasTaskset ? '; service pinned to CPU 0, clients not pinned' : ''}`,
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
