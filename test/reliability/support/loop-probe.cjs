// Loaded into the service under test with NODE_OPTIONS=--require (scenario 7), so that event-loop delay is measured
// inside the service with nothing added to its code. LOOP_PROBE_FILE names where it writes:
// - `<file>.holds`: one line `{"at": epoch ms, "ms": lateness}` for every tick of a 5 ms timer that came more than
//   HOLD_MS late, appended at once, so a hold is on disk even when the process is killed while the loop is stuck;
// - `<file>`: on SIGWINCH, perf_hooks' delay histogram since the previous SIGWINCH (then reset), as JSON.
'use strict';
/* global setInterval */
const { appendFileSync, renameSync, writeFileSync } = require('node:fs');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');

const file = process.env.LOOP_PROBE_FILE;
if (file) {
  const TICK_MS = 5;
  const HOLD_MS = 10;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const now = () => performance.timeOrigin + performance.now();
  let expected = now() + TICK_MS;
  setInterval(() => {
    const at = now();
    const late = at - expected;
    if (late > HOLD_MS) appendFileSync(`${file}.holds`, `${JSON.stringify({ at, ms: late })}\n`);
    expected = at + TICK_MS;
  }, TICK_MS).unref();
  let dumps = 0;
  process.on('SIGWINCH', () => {
    const ms = (ns) => ns / 1e6;
    const report = { dump: ++dumps, count: histogram.count, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
    histogram.reset();
    writeFileSync(`${file}.tmp`, JSON.stringify(report));
    renameSync(`${file}.tmp`, file);
  });
}
