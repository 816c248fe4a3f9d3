import { freshDatabase } from '../support/database.js';
import { freePort, GENEROUS_LIMITS, startServer } from '../support/server-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { HttpClient } from './support/http-client.js';
import { LeadLedger } from './support/leads.js';
import { runLoad, sleep, Teardown, waitFor } from './support/load.js';
import { seconds, SHORT } from './support/mode.js';
import { logSummary, report } from './support/report.js';
import { Tally } from './support/tally.js';
import { DATABASES, proxyFor, TEST_DATABASE_URL, through } from './support/services.js';
import { attemptLog, createEndpoint, deliveries, deliverySummary, drained, drainTime, LEASE_MS, operatorToken, WEBHOOK_ENV } from './support/webhooks.js';

/** Leads are posted by this many clients at once. */
const CLIENTS = 20;
const seconds1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Posts leads through `client` until `count` were acknowledged or `signal` aborts (or, without a signal, `count` were sent). */
function burst(ledger: LeadLedger, client: HttpClient, count: number, signal?: AbortSignal): Promise<number> {
  let sent = 0;
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort());
  return runLoad(CLIENTS, { signal: controller.signal }, async () => {
    if (sent >= count) return controller.abort();
    sent++;
    await ledger.post(client);
  });
}

describe('scenario 8: webhooks from the outbox', () => {
  const teardown = new Teardown();
  afterEach(() => teardown.run());

  const KILL_LEADS = SHORT ? 300 : 1000;
  const KILL_AT = Math.round(KILL_LEADS / 2);
  const SLOW_MS = 300;

  it.each(DATABASES)(
    `on %s: kill -9 during a burst of leads while the receiver is slow (${SLOW_MS} ms): every acknowledged lead is delivered, signed; duplicates counted`,
    async (kind) => {
      const database = teardown.add(await freshDatabase(kind), (db) => db.drop());
      const receiver = teardown.add(await WebhookReceiver.start(), (r) => r.close());
      receiver.fallback = { status: 200, delayMs: SLOW_MS };
      const port = await freePort();
      const env = { ...GENEROUS_LIMITS, ...database.env, ...WEBHOOK_ENV, LOG_LEVEL: 'warn' };
      const client = teardown.add(new HttpClient(`http://127.0.0.1:${port}`, { sockets: CLIENTS }), (c) => c.close());
      const probe = teardown.add(new HttpClient(`http://127.0.0.1:${port}`, { sockets: 2 }), (c) => c.close());
      const first = teardown.add(await startServer(env, port), (s) => s.stop('SIGKILL'));
      const token = await operatorToken(probe, database.env);
      const endpoint = await createEndpoint(probe, token, receiver.url);
      const ledger = new LeadLedger();

      // The first half of the burst, and the kill while it goes on: leads being stored and deliveries under way.
      const loadEnds = new AbortController();
      const started = Date.now();
      const load = burst(ledger, client, KILL_LEADS, loadEnds.signal);
      await waitFor('half the burst acknowledged', async () => ledger.acknowledged.size >= KILL_AT, 30_000);
      const receivedAtKill = receiver.received.length;
      await first.stop('SIGKILL');
      const killedAfterMs = Date.now() - started;
      loadEnds.abort();
      await load;
      const acknowledgedBeforeKill = ledger.acknowledged.size;
      const cut = ledger.unanswered;
      const logs = [logSummary(first.output())];

      const restarted = Date.now();
      const second = teardown.add(await startServer(env, port), (s) => s.stop('SIGKILL'));
      const restartMs = Date.now() - restarted;
      // The rest of the burst on the restarted instance.
      await burst(ledger, client, KILL_LEADS - acknowledgedBeforeKill);
      // On PostgreSQL, the dead process's leased deliveries wait for their lease to run out.
      const drainBound = (kind === 'postgres' ? LEASE_MS : 0) + 30_000;
      const drainMs = await drained(probe, receiver.received, endpoint.secret, ledger.acknowledged, drainBound);
      logs.push(logSummary(second.output()));
      await second.stop('SIGTERM');
      const result = deliveries(receiver.received, endpoint.secret, ledger.acknowledged);

      report(`8. Webhooks: kill -9 during a burst, slow receiver, on ${kind}`, [
        `${KILL_LEADS} leads by ${CLIENTS} clients; receiver answers 200 after ${SLOW_MS} ms; kill -9 after ${acknowledgedBeforeKill} acknowledged (${seconds1(killedAfterMs)} into the burst, ${receivedAtKill} webhook requests received by then), ${cut} requests without an answer (cut or refused); restart took ${seconds1(restartMs)}`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201; ${client.tally.summary()}`,
        `deliveries: ${deliverySummary(result)}; ${result.unacknowledged} delivered leads never acknowledged (cut by the kill, stored anyway)`,
        `backlog drained ${drainTime(drainMs, drainBound)} after the second half of the burst was acknowledged${kind === 'postgres' ? ` (the dead instance's leases run ${LEASE_MS / 1000} s)` : ' (SQLite: leases released at boot)'}`,
        `server logs: ${logs.join(' | ')}`,
      ]);
      expect(result.invalid).toEqual([]);
      expect(result.missing).toEqual([]);
      expect(drainMs).toBeDefined();
    },
    150_000,
  );

  const OUTAGE_LEADS = 40;
  const REFUSED_MS = seconds(2.5, 4);
  const UNAVAILABLE_MS = seconds(2.5, 4);

  it.each(DATABASES)(
    `on %s: the receiver refuses connections (${REFUSED_MS / 1000} s), then answers 503 (${UNAVAILABLE_MS / 1000} s), then 200: everything delivered, the deliveries API shows every failed attempt`,
    async (kind) => {
      const database = teardown.add(await freshDatabase(kind), (db) => db.drop());
      const receiver = teardown.add(await WebhookReceiver.start(), (r) => r.close());
      // The receiver behind a proxy: stopped, its port refuses connections.
      const gate = teardown.add(new TcpProxy('127.0.0.1', Number(new URL(receiver.url).port)), (p) => p.stop());
      await gate.start();
      const env = { ...GENEROUS_LIMITS, ...database.env, ...WEBHOOK_ENV, LOG_LEVEL: 'warn' };
      const server = teardown.add(await startServer(env), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS }), (c) => c.close());
      const token = await operatorToken(client, database.env);
      const endpoint = await createEndpoint(client, token, `http://127.0.0.1:${gate.port}/hook`);
      const ledger = new LeadLedger();

      await gate.stop();
      const started = Date.now();
      await burst(ledger, client, OUTAGE_LEADS);
      await sleep(REFUSED_MS - (Date.now() - started));
      receiver.fallback = { status: 503, body: 'down for maintenance' };
      await gate.start();
      await sleep(UNAVAILABLE_MS);
      receiver.fallback = { status: 200 };
      const drainMs = await drained(client, receiver.received, endpoint.secret, ledger.acknowledged, 20_000);
      const result = deliveries(receiver.received, endpoint.secret, ledger.acknowledged);
      const log = await attemptLog(client, token, endpoint.id);
      const logs = logSummary(server.output());
      await server.stop('SIGTERM');

      // Per message: the attempts the API shows, in order, and what the receiver answered it.
      const byMessage = new Map<string, typeof log>();
      for (const attempt of [...log].reverse()) byMessage.set(attempt.message_id, [...(byMessage.get(attempt.message_id) ?? []), attempt]);
      const answered503 = new Map<string, number>();
      for (const request of receiver.received) {
        const id = String(request.headers['webhook-id']);
        if (request.status === 503) answered503.set(id, (answered503.get(id) ?? 0) + 1);
      }
      const failed = log.filter((attempt) => attempt.outcome === 'failed');
      const errors = new Map<string, number>();
      for (const attempt of failed) {
        const label = attempt.status_code === null ? String(attempt.error) : String(attempt.status_code);
        errors.set(label, (errors.get(label) ?? 0) + 1);
      }
      const perMessage = [...byMessage.values()].map((attempts) => attempts.filter((a) => a.outcome === 'failed').length);
      /** Messages whose log is not: failed attempts numbered 1, 2, … and one success, last, matching the receiver's 503s. */
      const inconsistent = [...byMessage].filter(([id, attempts]) => {
        const numbered = attempts.every((attempt, index) => attempt.attempt === index + 1);
        const lastSucceeded = attempts.at(-1)?.outcome === 'succeeded' && attempts.slice(0, -1).every((a) => a.outcome === 'failed');
        const same503s = attempts.filter((a) => a.status_code === 503).length === (answered503.get(id) ?? 0);
        return !(numbered && lastSucceeded && same503s);
      });

      report(`8. Webhooks: receiver down, then up, on ${kind}`, [
        `${OUTAGE_LEADS} leads while the receiver's port is closed; it refuses connections for ${REFUSED_MS / 1000} s, answers 503 for ${UNAVAILABLE_MS / 1000} s, then 200; retry schedule ${WEBHOOK_ENV.WEBHOOK_RETRY_SCHEDULE}`,
        `deliveries: ${deliverySummary(result)}`,
        `backlog drained ${drainTime(drainMs, 20_000)} after the receiver answered 200 again`,
        `deliveries API: ${log.length} attempts for ${byMessage.size} messages: ${failed.length} failed (${[...errors].map(([label, count]) => `${label}×${count}`).join(', ')}), ${log.length - failed.length} succeeded; failed attempts per message ${Math.min(...perMessage)}–${Math.max(...perMessage)}; ${inconsistent.length} messages whose log disagrees with the receiver`,
        `server log: ${logs}`,
      ]);
      expect(result.invalid).toEqual([]);
      expect(result.missing).toEqual([]);
      expect(drainMs).toBeDefined();
      expect(result.duplicates).toEqual([]);
      // The log names the very messages the receiver got, each with its failed attempts before the one that succeeded.
      expect(new Set(byMessage.keys())).toEqual(new Set(result.delivered.keys()));
      expect(inconsistent.map(([id]) => id)).toEqual([]);
      expect(Math.min(...perMessage)).toBeGreaterThanOrEqual(2);
      expect(errors.get('503')).toBeGreaterThan(0);
      expect(failed.some((attempt) => attempt.status_code === null && attempt.error)).toBe(true);
    },
    90_000,
  );

  const DB_OUTAGE_LEADS = 200;
  const DB_OUTAGE_MS = seconds(5, 10);
  const AFTER_LEADS = 20;

  (TEST_DATABASE_URL ? it : it.skip)(
    `on postgres: PostgreSQL stopped for ${DB_OUTAGE_MS / 1000} s while deliveries are under way: the leads stored before keep being delivered, none lost`,
    async () => {
      const database = teardown.add(await freshDatabase('postgres'), (db) => db.drop());
      const proxy = teardown.add(proxyFor(TEST_DATABASE_URL!, 5432), (p) => p.stop());
      await proxy.start();
      const receiver = teardown.add(await WebhookReceiver.start(), (r) => r.close());
      receiver.fallback = { status: 200, delayMs: 200 };
      const env = { ...GENEROUS_LIMITS, ...WEBHOOK_ENV, LOG_LEVEL: 'warn', DATABASE_URL: through(database.env.DATABASE_URL, proxy.port) };
      const server = teardown.add(await startServer(env), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS }), (c) => c.close());
      const token = await operatorToken(client, database.env);
      const endpoint = await createEndpoint(client, token, receiver.url);
      const ledger = new LeadLedger();

      await burst(ledger, client, DB_OUTAGE_LEADS);
      const acknowledgedBefore = ledger.acknowledged.size;
      await waitFor('deliveries under way', async () => receiver.received.length >= DB_OUTAGE_LEADS / 5, 20_000);
      const receivedAtCut = receiver.received.length;
      await proxy.stop();
      await sleep(DB_OUTAGE_MS);
      const receivedDuringOutage = receiver.received.length - receivedAtCut;
      await proxy.start();
      const restored = Date.now();
      await waitFor('a lead stored after PostgreSQL returned', async () => (await ledger.post(client)).status === 201, 20_000);
      await burst(ledger, client, AFTER_LEADS);
      const drainMs = await drained(client, receiver.received, endpoint.secret, ledger.acknowledged, LEASE_MS + 20_000);
      const sinceRestored = Date.now() - restored;
      const stillRunning = server.child.exitCode === null;
      const logs = logSummary(server.output());
      await server.stop('SIGTERM');
      const result = deliveries(receiver.received, endpoint.secret, ledger.acknowledged);

      report('8. Webhooks: PostgreSQL stopped during delivery', [
        `${acknowledgedBefore} leads acknowledged before the outage; receiver answers 200 after 200 ms; PostgreSQL cut (TCP proxy stopped) for ${DB_OUTAGE_MS / 1000} s once ${receivedAtCut} webhook requests had arrived; ${receivedDuringOutage} arrived during the outage; ${ledger.acknowledged.size - acknowledgedBefore} more leads after it`,
        `deliveries: ${deliverySummary(result)}`,
        `backlog drained ${seconds1(sinceRestored)} after PostgreSQL returned (${drainTime(drainMs, LEASE_MS + 20_000)} after the last lead; attempts that ended during the outage could not be recorded, and their deliveries wait for the lease, ${LEASE_MS / 1000} s)`,
        `server log: ${logs}`,
      ]);
      expect(stillRunning).toBe(true);
      expect(drainMs).toBeDefined();
      expect(result.invalid).toEqual([]);
      expect(result.missing).toEqual([]);
    },
    120_000,
  );

  const TWO_LEADS = 300;

  (TEST_DATABASE_URL ? it : it.skip)(
    `on postgres: two instances on one database, ${TWO_LEADS} leads posted to both: every message delivered once, no concurrent double delivery`,
    async () => {
      const database = teardown.add(await freshDatabase('postgres'), (db) => db.drop());
      const receiver = teardown.add(await WebhookReceiver.start(), (r) => r.close());
      receiver.fallback = { status: 200, delayMs: 50 };
      const env = { ...GENEROUS_LIMITS, ...database.env, ...WEBHOOK_ENV, LOG_LEVEL: 'warn' };
      // Started together, as a deployment would.
      const instances = await Promise.all([startServer(env), startServer(env)]);
      for (const instance of instances) teardown.add(instance, (s) => s.stop('SIGKILL'));
      const clients = instances.map((instance) => teardown.add(new HttpClient(instance.baseUrl, { sockets: CLIENTS }), (c) => c.close()));
      const token = await operatorToken(clients[0], database.env);
      const endpoint = await createEndpoint(clients[0], token, receiver.url);
      const ledger = new LeadLedger();

      for (const client of clients) client.tally = new Tally();
      const started = Date.now();
      await Promise.all(clients.map((client) => burst(ledger, client, TWO_LEADS / 2)));
      const postedMs = Date.now() - started;
      const answers = clients.map((c) => c.tally.summary(postedMs));
      const drainMs = await drained(clients[1], receiver.received, endpoint.secret, ledger.acknowledged, 30_000);
      // The token is the first instance's (each has its own issuer URL here).
      const log = await attemptLog(clients[0], token, endpoint.id);
      const logs = instances.map((instance) => logSummary(instance.output()));
      await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
      const result = deliveries(receiver.received, endpoint.secret, ledger.acknowledged);

      report('8. Webhooks: two instances on one PostgreSQL', [
        `${TWO_LEADS} leads, half to each instance, ${CLIENTS} clients each (${seconds1(postedMs)}); receiver answers 200 after 50 ms; no kill, no failure`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201; ${answers.join(' | ')}`,
        `deliveries: ${deliverySummary(result)}; concurrent double deliveries: ${result.duplicates.length}`,
        `deliveries API: ${log.length} attempts, ${log.filter((a) => a.outcome !== 'succeeded').length} not succeeded`,
        `backlog drained ${drainTime(drainMs, 30_000)} after the last lead was acknowledged`,
        `server logs: ${logs.join(' | ')}`,
      ]);
      expect(ledger.acknowledged.size).toBe(TWO_LEADS);
      expect(drainMs).toBeDefined();
      expect(result.invalid).toEqual([]);
      expect(result.missing).toEqual([]);
      expect(result.duplicates).toEqual([]);
      expect(result.requests).toBe(TWO_LEADS);
      expect(log.filter((a) => a.outcome !== 'succeeded')).toEqual([]);
    },
    90_000,
  );
  const TWO_ENDPOINT_LEADS = 400;
  /** Well under a lease: a delivery dropped unsent waits a whole lease (LEASE_MS) before it is claimed again. */
  const NO_STALL_MS = 8_000;

  it.each(DATABASES)(
    `on %s: two endpoints, ${TWO_ENDPOINT_LEADS} leads: each endpoint gets every message once, and none waits for a lease to run out`,
    async (kind) => {
      const database = teardown.add(await freshDatabase(kind), (db) => db.drop());
      const receivers = [await WebhookReceiver.start(), await WebhookReceiver.start()];
      for (const receiver of receivers) {
        teardown.add(receiver, (r) => r.close());
        receiver.fallback = { status: 200, delayMs: 100 };
      }
      const server = teardown.add(await startServer({ ...GENEROUS_LIMITS, ...database.env, ...WEBHOOK_ENV, LOG_LEVEL: 'warn' }), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS }), (c) => c.close());
      const token = await operatorToken(client, database.env);
      const endpoints = [await createEndpoint(client, token, receivers[0].url), await createEndpoint(client, token, receivers[1].url)];
      const ledger = new LeadLedger();

      await burst(ledger, client, TWO_ENDPOINT_LEADS);
      const drainMs = await Promise.all(receivers.map((r, i) => drained(client, r.received, endpoints[i].secret, ledger.acknowledged, LEASE_MS + 10_000)));
      const logs = logSummary(server.output());
      await server.stop('SIGTERM');
      const results = receivers.map((r, i) => deliveries(r.received, endpoints[i].secret, ledger.acknowledged));
      /** The longest silence between two requests to one receiver while its messages were still due. */
      const gaps = receivers.map((r) => r.received.slice(1).reduce((max, request, i) => Math.max(max, request.at - r.received[i].at), 0));

      report(`8. Webhooks: two endpoints on ${kind}`, [
        `${TWO_ENDPOINT_LEADS} leads by ${CLIENTS} clients to one instance with two endpoints, each receiver answering 200 after 100 ms`,
        ...results.map(
          (result, i) =>
            `endpoint ${i + 1}: ${deliverySummary(result)}; drained ${drainTime(drainMs[i], LEASE_MS + 10_000)} after the last lead; longest gap between requests ${seconds1(gaps[i])}`,
        ),
        `server log: ${logs}`,
      ]);
      for (const result of results) {
        expect(result.invalid).toEqual([]);
        expect(result.missing).toEqual([]);
        expect(result.duplicates).toEqual([]);
      }
      for (const ms of drainMs) expect(ms).toBeLessThan(NO_STALL_MS);
    },
    60_000,
  );
});
