// A probe in a process of its own (scenario 9): GET <url> every PING_EVERY_MS, one at a time, until its standard
// input closes; then one JSON line on stdout: how many pings, the slowest answer, the longest gap between two answers
// and the 99th percentile of the answers, in milliseconds. A held event loop shows as a slow answer and a long gap.
'use strict';
/* global setTimeout */
const { request } = require('node:http');
const { performance } = require('node:perf_hooks');

const url = process.argv[2];
const PING_EVERY_MS = Number(process.argv[3] ?? 10);
const times = [];
let lastAnswer;
let maxGap = 0;
let failures = 0;
let done = false;
process.stdin.on('end', () => (done = true)).resume();

const ping = () =>
  new Promise((resolve) => {
    const started = performance.now();
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ok: false, ms: performance.now() - started }));
    req.end();
  });

(async () => {
  while (!done) {
    const next = performance.now() + PING_EVERY_MS;
    const { ok, ms } = await ping();
    const now = performance.now();
    if (!ok) failures++;
    times.push(ms);
    if (lastAnswer !== undefined) maxGap = Math.max(maxGap, now - lastAnswer);
    lastAnswer = now;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const sorted = [...times].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
  process.stdout.write(`${JSON.stringify({ pings: times.length, failures, max: sorted.at(-1) ?? 0, p99, maxGap })}\n`);
})();
