import { freshDatabase } from '../support/database.js';
import { GENEROUS_LIMITS, startServer } from '../support/server-process.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { HttpClient, Reply } from './support/http-client.js';
import { agentToken, LeadLedger } from './support/leads.js';
import { runLoad, sleep, Teardown, waitFor } from './support/load.js';
import { seconds } from './support/mode.js';
import { notUnavailableProblem } from './support/problems.js';
import { logSummary, report } from './support/report.js';
import { proxyFor, TEST_DATABASE_URL, through } from './support/services.js';
import { Tally } from './support/tally.js';

const CLIENTS = 50;
const PHASE_MS = seconds(3, 10);
/** The service's own bounds (README, Operations): health probes the database for at most 2 s; statements end after 10 s. */
const HEALTH_BOUND_MS = 2_000;
const STATEMENT_TIMEOUT_MS = 10_000;
const SLACK_MS = 3_000;
/** Leads are stored again this soon after the database returns, without a restart. */
const RECOVERY_BOUND_MS = 15_000;

interface Outage {
  name: string;
  how: string;
  durationMs: number;
  cut(proxy: TcpProxy): unknown;
  /** Every request is answered within this, however the database fails. */
  answerBoundMs: number;
}

const OUTAGES: Outage[] = [
  // PostgreSQL stopped (10 s in full mode): connections cut and refused. Answers come at once.
  { name: 'stopped', how: 'connections cut and refused', durationMs: seconds(5, 10), cut: (proxy) => proxy.stop(), answerBoundMs: 10_000 },
  // A network partition: nothing answers and nothing closes. Longer than the statement timeout, so that it shows.
  {
    name: 'silent',
    how: 'a network partition: connections held open, nothing answered',
    durationMs: seconds(12, 15),
    cut: (proxy) => proxy.partition(),
    answerBoundMs: STATEMENT_TIMEOUT_MS + SLACK_MS,
  },
];

interface Observed {
  phases: Record<'before' | 'out' | 'recovering' | 'after', Tally>;
  malformed503s: string[];
  health: Reply[];
  healthAfter: Reply;
  recoveredInMs: number;
  stillRunning: boolean;
  missing: string[];
}

describe.each(OUTAGES)('scenario 3: PostgreSQL $name under load', (outage) => {
  const teardown = new Teardown();
  let observed: Observed;
  afterAll(() => teardown.run());

  beforeAll(
    async () => {
      const database = teardown.add(await freshDatabase('postgres'), (db) => db.drop());
      const proxy = teardown.add(proxyFor(TEST_DATABASE_URL!, 5432), (p) => p.stop());
      await proxy.start();
      const env = { ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'warn', DATABASE_URL: through(database.env.DATABASE_URL, proxy.port) };
      const server = teardown.add(await startServer(env), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS, timeoutMs: outage.answerBoundMs + 10_000 }), (c) => c.close());
      // Health and the recovery probe on a connection of their own, so they never queue behind the load.
      const probe = teardown.add(new HttpClient(server.baseUrl, { sockets: 1 }), (c) => c.close());
      const token = await agentToken(client);
      const ledger = new LeadLedger();
      const phases = { before: new Tally(), out: new Tally(), recovering: new Tally(), after: new Tally() };
      const malformed503s: string[] = [];

      client.tally = phases.before;
      const loadEnds = new AbortController();
      // A quarter of the leads with a bearer token: its revocation check needs the database too.
      const load = runLoad(CLIENTS, { signal: loadEnds.signal }, async (worker) => {
        const reply = await ledger.post(client, worker % 4 ? {} : { token });
        const wrong = reply.status === 503 && notUnavailableProblem(reply);
        if (wrong) malformed503s.push(wrong);
      });
      await sleep(PHASE_MS);

      await outage.cut(proxy);
      client.tally = phases.out;
      const health: Reply[] = [];
      for (const end = Date.now() + outage.durationMs; Date.now() < end; await sleep(500)) health.push(await probe.send({ path: '/api/v1/health' }));

      await proxy.stop();
      await proxy.start();
      client.tally = phases.recovering;
      const recoveredInMs = await waitFor('a lead stored after PostgreSQL returned', async () => (await ledger.post(probe)).status === 201, RECOVERY_BOUND_MS);
      const healthAfter = await probe.send({ path: '/api/v1/health' });
      client.tally = phases.after;
      await sleep(PHASE_MS);
      loadEnds.abort();
      await load;
      const stillRunning = server.child.exitCode === null;
      const logs = logSummary(server.output());
      await server.stop('SIGTERM');
      const { stored, missing } = await ledger.verify(database);
      observed = { phases, malformed503s, health, healthAfter, recoveredInMs, stillRunning, missing };

      const degraded = health.filter((reply) => notUnavailableProblem(reply) === undefined && JSON.parse(reply.body).health?.status === 'degraded');
      report(`3. PostgreSQL ${outage.name} under load`, [
        `${CLIENTS} clients; PostgreSQL behind a TCP proxy, ${outage.how}, for ${outage.durationMs / 1000} s`,
        `before: ${phases.before.summary()}`,
        `out: ${phases.out.summary()}`,
        `restored, until the first 201 (${(recoveredInMs / 1000).toFixed(1)} s): ${phases.recovering.summary()}`,
        `after: ${phases.after.summary()}`,
        `health while out: ${health.length} probes, ${degraded.length} answered 503 with a degraded report; max ${Math.round(Math.max(...health.map((r) => r.ms)))} ms`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201, ${stored} rows stored, ${missing.length} missing`,
        `server log: ${logs}`,
      ]);
    },
    2 * PHASE_MS + outage.durationMs + RECOVERY_BOUND_MS + 60_000,
  );

  it(`answers every request within ${outage.answerBoundMs / 1000} s: none hangs`, () => {
    for (const phase of Object.values(observed.phases)) expect(phase.maxMs).toBeLessThanOrEqual(outage.answerBoundMs);
    for (const phase of Object.values(observed.phases)) expect(phase.others([201, 429, 500, 503])).toEqual({});
  });

  it('answers 503 service_unavailable with Retry-After while it is out, and no other 5xx', () => {
    for (const phase of [observed.phases.before, observed.phases.after]) expect(phase.others([201, 429])).toEqual({});
    for (const phase of [observed.phases.out, observed.phases.recovering]) expect(phase.others([201, 503, 429])).toEqual({});
    expect(observed.phases.out.count(503)).toBeGreaterThan(0);
    expect(observed.malformed503s).toEqual([]);
  });

  it(`reports the database down in health (503, degraded) within its ${HEALTH_BOUND_MS / 1000} s bound, and ok again after`, () => {
    const { health, healthAfter } = observed;
    expect(health.map((reply) => [reply.status, JSON.parse(reply.body).health])).toEqual(
      health.map(() => [
        503,
        { status: 'degraded', reasons: ['database_down'], version: expect.any(String), checks: { database: 'down' }, outbox: null, webhooks: null },
      ]),
    );
    expect(Math.max(...health.map((reply) => reply.ms))).toBeLessThanOrEqual(HEALTH_BOUND_MS + SLACK_MS);
    expect([healthAfter.status, JSON.parse(healthAfter.body).status]).toEqual([200, 'ok']);
  });

  it('stores leads again by itself once PostgreSQL is back, without a restart', () => {
    expect(observed.stillRunning).toBe(true);
    expect(observed.recoveredInMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    expect(observed.phases.after.count(201)).toBeGreaterThan(0);
  });

  it('loses no acknowledged lead', () => {
    expect(observed.missing).toEqual([]);
  });
});
