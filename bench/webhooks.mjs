// Webhook benchmark (issue 21, docs/decisions/0027-webhooks-outbox.md). Not part of CI.
// Usage (after `npm run build`; `npm run bench:webhooks -- …` builds when stale):
//   node bench/webhooks.mjs [--quick] [--rounds 3] [--duration 10] [--connections 50] [--warmup 1]
//                           [--rate 500] [--seconds 30] [--databases sqlite,postgres] [--drain-timeout 60] [--service FILE]
// On SQLite, then on PostgreSQL when TEST_DATABASE_URL is set (each service start gets a fresh schema, dropped after).
// The service runs pinned to CPU 0 (bench/support.mjs), with WEBHOOKS_ALLOW_PRIVATE=true (and its _IN_PRODUCTION
// consent, which NODE_ENV=production has asked for since issue 31) and a fixed SECRETS_KEY; this process
// (autocannon, the paced client) and the receiver (bench/webhook-receiver.mjs, a worker thread on 127.0.0.1 that
// answers 200 at once) share the other core.
// 1. Intake: POST /api/v1/lead with autocannon, the load shape of bench/run.mjs (--connections, --warmup then
//    --duration seconds), against a fresh service with one enabled endpoint (made with an operator token that has
//    webhooks:manage) and against a fresh service with none, alternating which goes first in each of --rounds rounds.
//    Reports each side's req/s and p99, and the median over rounds of the paired ratio with/without (target ≥ 0.8).
// 2. Delivery: --rate leads per second for --seconds (an open-loop paced client, each lead sent at its planned time
//    whatever the answers before it) to a service with one endpoint, after a 2 s warm-up at the same rate that has
//    drained. For each lead, the time from its 201 to its webhook's arrival at the receiver (matched by data.id):
//    p50/p95/p99/max (target p99 ≤ 250 ms); and the drain: how long after the last 201 the last webhook arrived, and
//    when GET /api/v1/health first reported webhooks.pending 0 with everything arrived (target ≤ 5 s).
// --only intake or --only delivery runs one part (for profiling: SERVICE_NODE_ARGS, see bench/support.mjs).
// --service FILE: another build's dist/server.mjs (and its clients command beside it), for a before/after comparison.
// --quick: 1 round of 5 s intake, 5 s of delivery; to check that a run works, not to quote.
// Prints a Markdown section for bench/RESULTS.md on stdout; progress on stderr.
import { execFileSync, spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  freshService,
  hasTaskset,
  JSON_HEADERS,
  leadLoad,
  median,
  memory,
  operatorToken,
  outboxPending,
  parseOptions,
  percentile,
  runLoad,
  SECRETS_KEY,
  SERVICE,
  startWorker,
  VARIED_LEAD_BODY,
} from './support.mjs';

const WARMUP_SECONDS = 2;
const POLL_MS = 50;

function parseArgs(argv) {
  const options = parseOptions(
    argv,
    {
      quick: false,
      rounds: 3,
      duration: 10,
      connections: 50,
      warmup: 1,
      rate: 500,
      seconds: 30,
      databases: process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'],
      drainTimeout: 60,
      only: ['intake', 'delivery'],
      service: SERVICE,
    },
    { script: 'bench/webhooks.mjs', min: { warmup: 0 }, quick: { rounds: 1, duration: 5, seconds: 5 } },
  );
  for (const database of options.databases) {
    if (database !== 'sqlite' && database !== 'postgres') throw new Error(`--databases: ${database} is neither sqlite nor postgres`);
    if (database === 'postgres' && !process.env.TEST_DATABASE_URL)
      throw new Error('postgres needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test');
  }
  return options;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable with the receiver thread's. */
const now = () => performance.timeOrigin + performance.now();
const log = (text) => console.error(text);

// ---------------------------------------------------------------------------------------------------------------
// The receiver, the database, the service

async function startReceiver() {
  const worker = await startWorker('./webhook-receiver.mjs');
  return {
    url: `http://127.0.0.1:${worker.port}/hook`,
    /** What arrived since the last take: { ids, ats, others }. */
    take: () => worker.ask('take'),
    close: worker.close,
  };
}

/** A fresh service on a fresh database; with `receiver`, one enabled endpoint for it (all events). */
function serviceFor(kind, receiver, script) {
  return freshService(
    kind,
    'webhooks',
    { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION: 'true', SECRETS_KEY },
    {
      script,
      prepare: async (service) => {
        if (!receiver) return;
        const token = await operatorToken(service, 'bench webhooks', 'webhooks:manage');
        const res = await fetch(`${service.base}/api/v1/webhooks`, {
          method: 'POST',
          headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` },
          body: JSON.stringify({ url: receiver.url, description: 'bench/webhooks.mjs' }),
        });
        const body = await res.json();
        if (res.status !== 201 || body.status !== 'enabled') throw new Error(`POST /api/v1/webhooks answered ${res.status}: ${JSON.stringify(body)}`);
      },
    },
  );
}

const backlog = outboxPending;

// ---------------------------------------------------------------------------------------------------------------
// 1. Intake with and without an endpoint

async function intake(kind, withEndpoint, receiver, opts) {
  const service = await serviceFor(kind, withEndpoint ? receiver : undefined, opts.service);
  try {
    const load = leadLoad(service, opts.connections);
    if (opts.warmup > 0) await runLoad({ ...load, duration: opts.warmup });
    await receiver.take();
    const result = await runLoad({ ...load, duration: opts.duration });
    const arrived = (await receiver.take()).ids.length;
    const pending = await backlog(service);
    const rss = memory(service.pid);
    if (result.non2xx || result.errors || result.timeouts)
      throw new Error(`intake: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      requests: result.requests.total,
      // webhooks that arrived during the measured seconds, per second; and what health counted right after them
      deliveredPerSecond: arrived / opts.duration,
      pendingAtEnd: pending,
      peakRssMb: rss?.peakMb,
    };
  } finally {
    await service.stop();
  }
}

async function intakePairs(kind, receiver, opts) {
  const rounds = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 ? [false, true] : [true, false];
    const pair = {};
    for (const withEndpoint of order) {
      const m = await intake(kind, withEndpoint, receiver, opts);
      pair[withEndpoint ? 'with' : 'without'] = m;
      log(
        `${kind} intake round ${round}/${opts.rounds} ${withEndpoint ? 'one endpoint' : 'no endpoint '}: ${Math.round(m.rps)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms` +
          (withEndpoint ? `; ${Math.round(m.deliveredPerSecond)} webhooks/s arrived, ${m.pendingAtEnd} pending at the end` : ''),
      );
    }
    pair.ratio = pair.with.rps / pair.without.rps;
    log(`${kind} intake round ${round}: ratio ${pair.ratio.toFixed(3)}`);
    rounds.push(pair);
  }
  return rounds;
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Delivery latency at a fixed rate

/**
 * POST /api/v1/lead on a keep-alive agent: { status, body, at (the answer read) }. A request on a reused connection
 * that the server had closed as idle meanwhile fails before the server read it; it is sent again on a new connection,
 * as Node's documentation advises (`retried` counts those).
 */
function postLead(agent, base, counts, body) {
  return new Promise((done, fail) => {
    const req = request(`${base}/api/v1/lead`, { method: 'POST', agent, headers: { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), at: now() }));
      res.on('error', fail);
    });
    req.on('error', (error) => {
      if (req.reusedSocket && error.code === 'ECONNRESET') {
        counts.retried++;
        postLead(agent, base, counts, body).then(done, fail);
      } else fail(error);
    });
    req.end(body);
  });
}

/**
 * `rate` leads a second for `seconds`, each sent at its planned time (open loop: a slow answer does not delay the next
 * request, up to 200 connections). Resolves to one { id, sentAt, at } per lead (at: its 201), the worst lateness of a send, and `backlogs`
 * (health's webhooks.pending once a second).
 */
async function paced(service, rate, seconds) {
  // Fewer connections than the service's MAX_CONNECTIONS_PER_ADDRESS (256): when all are busy a lead waits in the agent,
  // and its intake latency, counted from its planned time, shows the wait.
  const agent = new Agent({ keepAlive: true, maxSockets: 200, scheduling: 'fifo' });
  const total = Math.round(rate * seconds);
  // this run's leads differ from the warm-up's too
  const started = Date.now();
  const interval = 1000 / rate;
  const leads = new Array(total);
  const start = now() + 20;
  let sent = 0;
  let sendEnd = start;
  let worstLateMs = 0;
  const answers = [];
  const counts = { retried: 0 };
  const backlogs = [];
  const sampler = setInterval(
    () =>
      void backlog(service).then(
        (pending) => backlogs.push(pending),
        () => undefined,
      ),
    1000,
  );
  await new Promise((resolve) => {
    const tick = () => {
      const t = now();
      while (sent < total && start + sent * interval <= t) {
        const index = sent++;
        worstLateMs = Math.max(worstLateMs, t - (start + index * interval));
        answers.push(
          postLead(agent, service.base, counts, VARIED_LEAD_BODY.replace('[<id>]', `${started}-${index}`)).then((res) => {
            if (res.status !== 201) throw new Error(`a paced lead answered ${res.status}: ${res.body.slice(0, 300)}`);
            leads[index] = { id: JSON.parse(res.body).id, sentAt: start + index * interval, at: res.at };
          }),
        );
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - now() - 0.5));
      else {
        sendEnd = now();
        resolve();
      }
    };
    setTimeout(tick, Math.max(0, start - now()));
  });
  try {
    await Promise.all(answers);
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
  return { leads, worstLateMs, backlogs, retried: counts.retried, sendSeconds: (sendEnd - start) / 1000 + interval / 1000 };
}

/**
 * Waits until every lead's webhook has arrived and health reports no pending work (or `timeoutMs` passes). Returns
 * the first arrival per lead id, the number of repeated arrivals, and when health first said 0 with all arrived.
 */
async function drain(service, receiver, ids, timeoutMs, arrivals = new Map()) {
  const expected = new Set(ids);
  let duplicates = 0;
  let others = 0;
  let missing = expected.size;
  const began = now();
  for (;;) {
    const taken = await receiver.take();
    others += taken.others;
    taken.ids.forEach((id, i) => {
      if (arrivals.has(id)) duplicates++;
      else {
        arrivals.set(id, taken.ats[i]);
        if (expected.has(id)) missing--;
      }
    });
    if (missing === 0 && (await backlog(service)) === 0) return { arrivals, duplicates, others, zeroAt: now(), missing };
    if (now() - began > timeoutMs) return { arrivals, duplicates, others, zeroAt: undefined, missing };
    await sleep(POLL_MS);
  }
}

async function delivery(kind, receiver, opts) {
  const service = await serviceFor(kind, receiver, opts.service);
  try {
    const warm = await paced(service, opts.rate, WARMUP_SECONDS);
    const warmDrain = await drain(
      service,
      receiver,
      warm.leads.map((lead) => lead.id),
      opts.drainTimeout * 1000,
    );
    // the sample lead of serviceFor arrived too: all that is left over is known
    if (warmDrain.zeroAt === undefined) throw new Error(`the warm-up did not drain: ${warmDrain.missing} webhooks missing`);
    log(`${kind} delivery: warm-up of ${warm.leads.length} leads drained`);

    const run = await paced(service, opts.rate, opts.seconds);
    const loadEnd = Math.max(...run.leads.map((lead) => lead.at));
    const ids = run.leads.map((lead) => lead.id);
    const drained = await drain(service, receiver, ids, opts.drainTimeout * 1000);
    const rss = memory(service.pid);
    const latencies = [];
    let lastArrival = -Infinity;
    for (const lead of run.leads) {
      const at = drained.arrivals.get(lead.id);
      if (at === undefined) continue;
      latencies.push(at - lead.at);
      lastArrival = Math.max(lastArrival, at);
    }
    const intakeLatencies = run.leads.map((lead) => lead.at - lead.sentAt);
    const m = {
      leads: run.leads.length,
      sentRate: run.leads.length / run.sendSeconds,
      worstLateMs: run.worstLateMs,
      retried: run.retried,
      intakeP50: percentile(intakeLatencies, 50),
      intakeP99: percentile(intakeLatencies, 99),
      arrived: latencies.length,
      missing: drained.missing,
      duplicates: drained.duplicates,
      min: Math.min(...latencies),
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
      lastArrivalMs: lastArrival - loadEnd,
      drainMs: drained.zeroAt === undefined ? undefined : drained.zeroAt - loadEnd,
      maxBacklog: Math.max(0, ...run.backlogs),
      backlogs: run.backlogs,
      peakRssMb: rss?.peakMb,
    };
    log(
      `${kind} delivery: ${m.leads} leads at ${m.sentRate.toFixed(0)}/s (intake p99 ${m.intakeP99.toFixed(1)} ms); 201 → arrival p50 ${m.p50.toFixed(1)} ` +
        `p95 ${m.p95.toFixed(1)} p99 ${m.p99.toFixed(1)} max ${m.max.toFixed(1)} ms; last arrival +${m.lastArrivalMs.toFixed(0)} ms, ` +
        `pending 0 at +${m.drainMs?.toFixed(0) ?? '–'} ms; backlog samples ${m.backlogs.join(' ')}`,
    );
    return m;
  } finally {
    await service.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const LABEL = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
const f = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

function report(results, opts, started) {
  // the commit of the service's tree (another build's with --service)
  const gitRev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: resolve(dirname(opts.service), '..'), encoding: 'utf8' }).trim();
  const args = process.argv.slice(2).join(' ');
  const lines = [
    `## Webhooks (issue 21), \`bench/webhooks.mjs\`, ${new Date().toISOString().slice(0, 10)}`,
    '',
    `\`node bench/webhooks.mjs${args ? ` ${args}` : ''}\` at ${gitRev}, ${new Date().toISOString()}; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}; ` +
      `load average ${started.load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end; ${((performance.now() - started.at) / 60_000).toFixed(1)} min.` +
      `${hasTaskset ? ' Service pinned to CPU 0; autocannon, the paced client and the receiver (a worker thread) on CPU 1.' : ''}` +
      ' A fresh service and database (SQLite folder, or PostgreSQL schema dropped after) for every measurement.',
    '',
    `Intake: POST /api/v1/lead, ${opts.connections} connections, ${opts.warmup} s warm-up then ${opts.duration} s, with one enabled endpoint (receiver answers 200 at once) ` +
      `and with none, alternating first, ${opts.rounds} round(s); ratio = with ÷ without req/s of the same round, median over rounds (target ≥ 0.8).`,
    '',
    '| database | round | no endpoint req/s | p99 ms | one endpoint req/s | p99 ms | ratio | webhooks/s arrived during load | pending at the end |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const { kind, rounds } of results) {
    if (!rounds.length) continue;
    rounds.forEach((r, i) =>
      lines.push(
        `| ${LABEL[kind]} | ${i + 1} | ${f(r.without.rps)} | ${f(r.without.p99)} | ${f(r.with.rps)} | ${f(r.with.p99)} | ${f(r.ratio, 3)} | ${f(r.with.deliveredPerSecond)} | ${r.with.pendingAtEnd} |`,
      ),
    );
    const med = (pick) => median(rounds.map(pick));
    lines.push(
      `| **${LABEL[kind]}** | median | ${f(med((r) => r.without.rps))} | ${f(med((r) => r.without.p99))} | ${f(med((r) => r.with.rps))} | ${f(med((r) => r.with.p99))} | ` +
        `**${f(
          med((r) => r.ratio),
          3,
        )}** | ${f(med((r) => r.with.deliveredPerSecond))} | |`,
    );
  }
  lines.push(
    '',
    `Delivery: ${opts.rate} leads/s for ${opts.seconds} s (open loop; after a ${WARMUP_SECONDS} s warm-up at the same rate, drained), one endpoint. ` +
      "Latency = the receiver's arrival of a lead's webhook − the lead's 201 at the client (same clock; a webhook may arrive before the client has read the 201). " +
      'Drain = after the last 201: the last arrival, and health first reporting webhooks.pending 0 with all arrived (polled every 50 ms). Targets: p99 ≤ 250 ms, drain ≤ 5 s.',
    '',
    '| database | leads | sent/s | intake p99 ms | arrived | duplicates | p50 ms | p95 ms | p99 ms | max ms | last arrival s | pending 0 s | max backlog | service peak RSS MB |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const { kind, delivery: d } of results) {
    if (!d) continue;
    lines.push(
      `| ${LABEL[kind]} | ${d.leads} | ${f(d.sentRate)} | ${f(d.intakeP99, 1)} | ${d.arrived} | ${d.duplicates} | ${f(d.p50, 1)} | ${f(d.p95, 1)} | ${f(d.p99, 1)} | ${f(d.max, 1)} | ` +
        `${f(d.lastArrivalMs / 1000, 2)} | ${f(d.drainMs / 1000, 2)} | ${d.maxBacklog} | ${f(d.peakRssMb, 1)} |`,
    );
  }
  lines.push('', 'Backlog (health webhooks.pending) once a second during the delivery run:', '');
  for (const { kind, delivery: d } of results) if (d) lines.push(`- ${LABEL[kind]}: ${d.backlogs.join(', ')}`);
  return lines.join('\n');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = { at: performance.now(), load: loadavg()[0] };
  // The client side keeps to the other core(s) when the service is pinned to CPU 0.
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const receiver = await startReceiver();
  const results = [];
  try {
    for (const kind of opts.databases) {
      const rounds = opts.only.includes('intake') ? await intakePairs(kind, receiver, opts) : [];
      results.push({ kind, rounds, delivery: opts.only.includes('delivery') ? await delivery(kind, receiver, opts) : undefined });
    }
  } finally {
    await receiver.close();
  }
  console.log(report(results, opts, started));
}

await main();
