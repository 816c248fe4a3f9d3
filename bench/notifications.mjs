// E-mail notification benchmark (issue 34, docs/decisions/0036-notification-recipients.md). Not part of CI.
// Usage (after `npm run build`; `npm run bench:notifications -- …` builds when stale):
//   node bench/notifications.mjs [--quick] [--rounds 5] [--duration 20] [--warmup 3] [--connections 50] [--bar 0.8]
//                                [--drain-timeout 600] [--drain-all] [--service FILE]
// SQLite. The service runs pinned to CPU 0 (bench/support.mjs) with SMTP_URL on an SMTP sink (bench/smtp-sink.mjs, a
// worker thread on 127.0.0.1 that accepts every message at once and counts them); this process (autocannon) and the
// sink share the other core.
// Intake by the paired method of bench/RESULTS.md ("Method"): in each of --rounds pairs, a fresh service with one
// confirmed immediate recipient and a fresh service with none (both with SMTP_URL), alternating which goes first;
// each side POST /api/v1/lead with autocannon (each lead different: bench/support.mjs, VARIED_LEAD_BODY), --warmup
// seconds unmeasured then --duration seconds measured, its CPU time per request from /proc. The recipient is made as
// a team would: an operator token with notifications:manage, POST /api/v1/notification-recipients, then the
// confirmation e-mail read from the sink (mailparser), its link's page fetched and the page's form posted with the
// token and the service's Origin. Reports each side's req/s, p99 and CPU
// µs per request, and the median ratios one ÷ none (req/s; CPU: none's µs ÷ one's) with their spread, against --bar.
// After the last pair's measured load with a recipient (after every pair's with --drain-all: each drain takes minutes,
// as e-mail leaves at a few hundred a second and a pair leaves tens of thousands): the drain, until the sink holds one
// e-mail per lead acknowledged (the sample lead, the warm-up's and the measurement's 201s) and health reports no
// pending outbox delivery; its time after the load's end, and any message sent twice (a repeated Message-ID). The
// other pairs' services stop with their backlog.
// --quick: 1 pair of 5 s after 1 s; to check that a run works, not to quote (no verdict).
// Prints a Markdown section for bench/RESULTS.md on stdout; progress on stderr.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { URLSearchParams } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { simpleParser } from 'mailparser';
import {
  PAIRED,
  SERVICE,
  cpuMs,
  freshService,
  hasTaskset,
  JSON_HEADERS,
  leadLoad,
  median,
  operatorToken,
  outboxPending,
  parseOptions,
  runLoad,
  SECRETS_KEY,
  spread,
  startWorker,
  verdict,
} from './support.mjs';

const RECIPIENT = 'equipe.marketing@example.com';
const POLL_MS = 100;

function parseArgs(argv) {
  const options = parseOptions(
    argv,
    {
      quick: false,
      rounds: PAIRED.pairs,
      duration: PAIRED.seconds,
      warmup: PAIRED.warmup,
      connections: 50,
      bar: 0.8,
      drainTimeout: 600,
      drainAll: false,
      service: SERVICE,
    },
    { script: 'bench/notifications.mjs', min: { warmup: 0, bar: 0 }, quick: { rounds: 1, duration: 5, warmup: 1 } },
  );
  options.method = options.rounds >= PAIRED.pairs && options.duration >= PAIRED.seconds && options.warmup >= PAIRED.warmup;
  return options;
}

const log = (text) => console.error(text);
const load1 = () => loadavg()[0].toFixed(2);

// ---------------------------------------------------------------------------------------------------------------
// The sink, the service, the recipient

async function startSink() {
  const worker = await startWorker('./smtp-sink.mjs');
  return { url: `smtp://127.0.0.1:${worker.port}`, take: (message = {}) => worker.ask(message), close: worker.close };
}

/** Waits for what `check` finds in the sink's takes (polling); throws naming `what` after `timeoutMs`. */
async function untilTaken(sink, what, keep, check, timeoutMs = 30_000) {
  const began = performance.now();
  for (;;) {
    const found = check(await sink.take({ keep }));
    if (found !== undefined) return found;
    if (performance.now() - began > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * One confirmed immediate recipient, as a team makes it: added through the API, then confirmed by the link of its
 * confirmation e-mail: the page it opens, and that page's form posted with the token and the service's Origin.
 */
async function confirmedRecipient(service, sink) {
  const token = await operatorToken(service, 'bench notifications', 'notifications:manage');
  const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` };
  await sink.take({ reset: true, keep: true });
  const added = await fetch(`${service.base}/api/v1/notification-recipients`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email: RECIPIENT, mode: 'immediate' }),
  });
  const recipient = await added.json();
  if (added.status !== 201 || recipient.status !== 'pending') throw new Error(`adding the recipient answered ${added.status}: ${JSON.stringify(recipient)}`);

  const raw = await untilTaken(sink, 'the confirmation e-mail', true, (taken) => taken.raws[0]);
  const mail = await simpleParser(raw);
  const link = /https?:\/\/\S+\/notifications\/confirm\?token=[^\s>]+/.exec(mail.text ?? '')?.[0];
  if (!link) throw new Error(`no confirmation link in the e-mail "${mail.subject}"`);
  const page = await (await fetch(link, { headers: { accept: 'text/html' } })).text();
  const form = /<form method="post" action="([^"]+)">\s*<input type="hidden" name="token" value="([^"]+)">/.exec(page);
  if (!form) throw new Error('the confirmation page has no confirm form');
  const confirmed = await fetch(new URL(form[1].replace(/&amp;/g, '&'), service.base), {
    method: 'POST',
    headers: { accept: 'text/html', origin: service.base },
    body: new URLSearchParams({ token: form[2] }),
  });
  await confirmed.arrayBuffer();
  if (confirmed.status !== 200) throw new Error(`posting the confirm form answered ${confirmed.status}`);

  const read = await fetch(`${service.base}/api/v1/notification-recipients/${recipient.id}`, { headers });
  const state = await read.json();
  if (state.status !== 'confirmed') throw new Error(`the recipient is ${state.status} after its confirmation`);
  await sink.take({ keep: false });
}

// ---------------------------------------------------------------------------------------------------------------
// Intake, paired

/**
 * Waits until the sink holds `expected` e-mails and health reports no pending delivery, or `timeoutMs` passes:
 * { arrived, duplicates, drainMs (from `since`; undefined on a timeout) }.
 */
async function drain(service, sink, expected, arrived, since, timeoutMs) {
  let duplicates = 0;
  for (;;) {
    const taken = await sink.take();
    arrived += taken.count;
    duplicates += taken.duplicates;
    if (arrived >= expected && (await outboxPending(service)) === 0) return { arrived, duplicates, drainMs: performance.now() - since };
    if (performance.now() - since > timeoutMs) return { arrived, duplicates, drainMs: undefined };
    await sleep(POLL_MS);
  }
}

async function side(withRecipient, drained, sink, opts) {
  const service = await freshService(
    'sqlite',
    'notifications',
    { SMTP_URL: sink.url, SECRETS_KEY },
    { script: opts.service, prepare: withRecipient ? (s) => confirmedRecipient(s, sink) : undefined },
  );
  try {
    const load = leadLoad(service, opts.connections);
    const warm = opts.warmup > 0 ? await runLoad({ ...load, duration: opts.warmup }) : { '2xx': 0 };
    const cpuBefore = cpuMs(service.pid);
    const result = await runLoad({ ...load, duration: opts.duration });
    const cpu = cpuMs(service.pid) - cpuBefore;
    const loadEnd = performance.now();
    if (result.non2xx || result.errors || result.timeouts)
      throw new Error(`intake: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    const m = { rps: result.requests.average, p99: result.latency.p99, cpuUs: (1000 * cpu) / result.requests.total };
    if (withRecipient) {
      // the sample lead, the warm-up's and the measurement's
      m.acknowledged = 1 + warm['2xx'] + result['2xx'];
      const during = await sink.take();
      m.duringLoad = during.count;
      m.duplicates = during.duplicates;
      if (drained) {
        const after = await drain(service, sink, m.acknowledged, during.count, loadEnd, opts.drainTimeout * 1000);
        Object.assign(m, after, { duplicates: m.duplicates + after.duplicates });
      }
    }
    return m;
  } finally {
    await service.stop();
  }
}

async function pairs(sink, opts) {
  const rows = [];
  for (let pair = 1; pair <= opts.rounds; pair++) {
    const loadBefore = load1();
    const order = pair % 2 ? [false, true] : [true, false];
    const m = {};
    const drained = opts.drainAll || pair === opts.rounds;
    for (const withRecipient of order) m[withRecipient ? 'one' : 'none'] = await side(withRecipient, drained, sink, opts);
    const row = {
      pair,
      first: order[0] ? 'one' : 'none',
      ...m,
      rps: m.one.rps / m.none.rps,
      cpu: m.none.cpuUs / m.one.cpuUs,
      load: `${loadBefore} → ${load1()}`,
    };
    rows.push(row);
    log(
      `pair ${pair}/${opts.rounds}: none ${Math.round(m.none.rps)} req/s, p99 ${m.none.p99} ms, ${Math.round(m.none.cpuUs)} µs CPU/request; ` +
        `one ${Math.round(m.one.rps)} req/s, p99 ${m.one.p99} ms, ${Math.round(m.one.cpuUs)} µs CPU/request; ratio req/s ${row.rps.toFixed(3)}, CPU ${row.cpu.toFixed(3)}; ` +
        `e-mails ${m.one.arrived ?? '(not drained)'}/${m.one.acknowledged} (${m.one.duringLoad} during the load, ${m.one.duplicates} twice), drained ${f(m.one.drainMs / 1000, 1)} s after; load ${row.load}`,
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const f = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

function report(rows, opts, started) {
  const bar = opts.method ? opts.bar : undefined;
  const rps = rows.map((r) => r.rps);
  const cpu = rows.map((r) => r.cpu);
  const drainedRows = rows.filter((r) => r.one.arrived !== undefined);
  const allArrived = drainedRows.every((r) => r.one.drainMs !== undefined && r.one.arrived >= r.one.acknowledged);
  const twice = rows.reduce((sum, r) => sum + r.one.duplicates, 0);
  const args = process.argv.slice(2).join(' ');
  return [
    `## E-mail notifications (issue 34), \`bench/notifications.mjs\`, ${new Date().toISOString().slice(0, 10)}`,
    '',
    `\`node bench/notifications.mjs${args ? ` ${args}` : ''}\`, ${new Date().toISOString()}: service ${opts.service}; ${opts.rounds} pairs of ${opts.duration} s after ${opts.warmup} s of warm-up, ` +
      `${opts.connections} connections, SQLite, SMTP_URL on a sink (smtp-server in a worker thread, every message accepted at once); Node ${process.version}, ` +
      `${cpus().length} × ${cpus()[0]?.model.trim()}${hasTaskset ? ', service on CPU 0, autocannon and the sink on the others' : ', not pinned'}; ` +
      `load average ${started.load} at the start, ${loadavg()
        .map((v) => v.toFixed(2))
        .join(', ')} at the end; ${((performance.now() - started.at) / 60_000).toFixed(1)} min.` +
      (opts.method
        ? ''
        : ` **Not the method of bench/RESULTS.md (at least ${PAIRED.pairs} pairs of ${PAIRED.seconds} s after ${PAIRED.warmup} s): a quick look only.**`),
    '',
    '"none": a fresh service with no recipient; "one": a fresh service with one confirmed immediate recipient; every lead of the load differs by its mensagem (a sixth identical lead from one address is held by screening, and not notified). E-mails: arrived at the sink / leads acknowledged (201s: the sample lead, the warm-up and the measurement), during the measured load, and sent twice (a repeated Message-ID); drain: from the end of the load until the sink held them all and health reported no pending delivery.',
    '',
    '| pair | first | none req/s | one req/s | none p99 ms | one p99 ms | none CPU µs/req | one CPU µs/req | req/s ratio | CPU ratio | e-mails arrived / acknowledged | during the load | twice | drain s | load 1 min |',
    '|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
    ...rows.map(
      (r) =>
        `| ${r.pair} | ${r.first} | ${Math.round(r.none.rps)} | ${Math.round(r.one.rps)} | ${r.none.p99} | ${r.one.p99} | ${Math.round(r.none.cpuUs)} | ${Math.round(r.one.cpuUs)} | ` +
        `${r.rps.toFixed(3)} | ${r.cpu.toFixed(3)} | ${r.one.arrived ?? 'not drained'} / ${r.one.acknowledged} | ${r.one.duringLoad} | ${r.one.duplicates} | ${f(r.one.drainMs / 1000, 1)} | ${r.load} |`,
    ),
    '',
    `**POST /api/v1/lead with one confirmed immediate recipient ÷ with none**: req/s **${median(rps).toFixed(3)}** (${spread(rps)})${verdict(rps, bar)}; ` +
      `CPU per request (none ÷ one) ${median(cpu).toFixed(3)} (${spread(cpu)})${verdict(cpu, bar)}. ` +
      `Every acknowledged lead's e-mail arrived after the drain (pair${drainedRows.length > 1 ? 's' : ''} ${drainedRows.map((r) => r.pair).join(', ')}): **${allArrived ? 'yes' : 'no'}**; ` +
      `sent twice: ${twice}; drain ${drainedRows.map((r) => `${f(r.one.drainMs / 1000, 1)} s for ${r.one.acknowledged - r.one.duringLoad} e-mails left at the end of the load`).join(', ')}.`,
    '',
  ].join('\n');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = {
    at: performance.now(),
    load: loadavg()
      .map((v) => v.toFixed(2))
      .join(', '),
  };
  // The client side keeps to the other core(s) when the service is pinned to CPU 0.
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `1-${cpus().length - 1}`, String(process.pid)]);
  const sink = await startSink();
  try {
    console.log(report(await pairs(sink, opts), opts, started));
  } finally {
    await sink.close();
  }
}

await main();
