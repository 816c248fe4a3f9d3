import { freshDatabase, TestDatabase } from '../support/database.js';
import { GENEROUS_LIMITS, ServerProcess, startServer } from '../support/server-process.js';
import { HttpClient } from './support/http-client.js';
import { LeadLedger } from './support/leads.js';
import { runLoad } from './support/load.js';
import { logSummary, report } from './support/report.js';
import { Cut, slowLoris, untilClosed } from './support/slow-clients.js';

/** The server's timeouts, as the README documents them (serverTimeouts in src/app.setup.ts). */
const HEADERS_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Set through KEEP_ALIVE_TIMEOUT, longer than the default 5 s so that the check shows the setting applied. */
const KEEP_ALIVE_TIMEOUT_MS = 8_000;
/** Node enforces the headers and request timeouts when it sweeps its connections, every `connectionsCheckingInterval` (1 s here). */
const NODE_SWEEP_MS = 1_000;
const SLACK_MS = 5_000;
const LORIS_SOCKETS = 200;
const NORMAL_CLIENTS = 10;
/** "Reasonable latency" for the normal clients: generous, the machine is shared. */
const NORMAL_LATENCY_BOUND_MS = 5_000;

const within = (cut: Cut, timeoutMs: number, upToMs: number) =>
  cut.closedAfterMs !== undefined && cut.closedAfterMs >= timeoutMs - 1_000 && cut.closedAfterMs <= upToMs;
/** "29.9–30.1 s", and how many were never cut. */
function cutTimes(cuts: Cut[]): string {
  const times = cuts.flatMap((cut) => (cut.closedAfterMs === undefined ? [] : [cut.closedAfterMs / 1000]));
  const range = times.length ? `${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)} s` : 'never';
  return times.length < cuts.length ? `${range}, ${cuts.length - times.length} never cut` : range;
}

describe('scenario 5: slow clients', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let normal: HttpClient;
  let loris: Cut[];
  let stalled: Cut;
  let idle: Cut[];

  beforeAll(
    async () => {
      database = await freshDatabase('sqlite');
      server = await startServer({ ...GENEROUS_LIMITS, ...database.env, KEEP_ALIVE_TIMEOUT: String(KEEP_ALIVE_TIMEOUT_MS / 1000), LOG_LEVEL: 'warn' });
      const port = Number(new URL(server.baseUrl).port);
      normal = new HttpClient(server.baseUrl, { sockets: NORMAL_CLIENTS });

      const lorisDone = slowLoris(port, LORIS_SOCKETS, { intervalMs: 1_000, giveUpMs: HEADERS_TIMEOUT_MS + NODE_SWEEP_MS + SLACK_MS });
      // Headers complete, 10 bytes of a 100-byte body, then nothing.
      const stalledDone = untilClosed(
        port,
        'POST /api/v1/lead HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"nome": "',
        REQUEST_TIMEOUT_MS + NODE_SWEEP_MS + SLACK_MS,
      );
      // Each answered once, then left idle with keep-alive (HTTP/1.1's default).
      const idleDone = Promise.all(
        Array.from({ length: 5 }, () => untilClosed(port, 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', KEEP_ALIVE_TIMEOUT_MS + SLACK_MS + 5_000)),
      );
      // Ordinary clients for as long as the slow-loris lasts.
      const ledger = new LeadLedger();
      const lorisOver = new AbortController();
      const traffic = runLoad(NORMAL_CLIENTS, { signal: lorisOver.signal }, (worker) =>
        worker % 2 ? ledger.post(normal) : normal.send({ path: '/api/v1/health' }),
      );
      loris = await lorisDone;
      lorisOver.abort();
      [stalled, idle] = await Promise.all([stalledDone, idleDone, traffic]);
      const statuses = (cuts: Cut[]) => [...new Set(cuts.map((cut) => cut.status))].join(', ');
      report('5. Slow clients', [
        `slow-loris: ${LORIS_SOCKETS} sockets, one header byte a second each; cut after ${cutTimes(loris)} (headersTimeout ${HEADERS_TIMEOUT_MS / 1000} s), answered ${statuses(loris)}`,
        `meanwhile ${NORMAL_CLIENTS} normal clients: ${normal.tally.summary()}`,
        `stalled body: cut after ${cutTimes([stalled])} (requestTimeout ${REQUEST_TIMEOUT_MS / 1000} s), answered ${stalled.status}`,
        `idle keep-alive connections: closed after ${cutTimes(idle)} (keepAliveTimeout ${KEEP_ALIVE_TIMEOUT_MS / 1000} s; Node waits 1 s more)`,
        `server log: ${logSummary(server.output())}`,
      ]);
    },
    HEADERS_TIMEOUT_MS + REQUEST_TIMEOUT_MS + 2 * NODE_SWEEP_MS + 60_000,
  );

  afterAll(async () => {
    normal?.close();
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  it('keeps answering other clients during a slow-loris, with bounded latency', () => {
    expect(normal.tally.total).toBeGreaterThan(0);
    expect(normal.tally.others([200, 201])).toEqual({});
    expect(normal.tally.maxMs).toBeLessThanOrEqual(NORMAL_LATENCY_BOUND_MS);
  });

  it('cuts every slow-loris connection after the headers timeout', () => {
    expect(loris.filter((cut) => !within(cut, HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS + NODE_SWEEP_MS + SLACK_MS))).toEqual([]);
  });

  it('cuts a request whose body stalls after the request timeout', () => {
    expect(within(stalled, REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS + NODE_SWEEP_MS + SLACK_MS)).toBe(true);
  });

  it('closes idle keep-alive connections after the keep-alive timeout', () => {
    expect(idle.map((cut) => cut.status)).toEqual(idle.map(() => 200));
    expect(idle.filter((cut) => !within(cut, KEEP_ALIVE_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS + SLACK_MS))).toEqual([]);
  });

  it('answers every timed-out request 408 request_timeout', () => {
    const answered = [...loris, stalled].map((cut) => cut.status);
    expect(answered.filter((status) => status !== 408)).toEqual([]);
  });
});
