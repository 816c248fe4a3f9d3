import { freshDatabase } from '../support/database.js';
import { GENEROUS_LIMITS, startServer } from '../support/server-process.js';
import { HttpClient, Reply } from './support/http-client.js';
import { LeadLedger, register } from './support/leads.js';
import { runLoad, sleep, Teardown, waitFor } from './support/load.js';
import { seconds } from './support/mode.js';
import { logSummary, report } from './support/report.js';
import { freshRedis, proxyFor, TEST_REDIS_URL, through } from './support/services.js';
import { Tally } from './support/tally.js';

const CLIENTS = 50;
const PHASE_MS = seconds(3, 10);
const OUTAGE_MS = seconds(5, 10);
/** Without Redis a request may wait at most ioredis' command timeout (250 ms); this is the generous bound. */
const ANSWER_BOUND_MS = 5_000;
/** ioredis retries at most every 2 s; the service uses Redis again this soon after it returns. */
const RECONNECT_BOUND_MS = 10_000;
/** A small per-IP quota, counted in Redis or, while it is gone, in the instance: which store counts shows in the answers. */
const REGISTRATIONS = 6;
const REDIS_DB = 11;

(TEST_REDIS_URL ? describe : describe.skip)('scenario 4: Redis stopped under load', () => {
  const teardown = new Teardown();
  afterEach(() => teardown.run());

  it(
    'keeps answering on per-instance limits, reports redis down, and shares the counters again when Redis returns',
    async () => {
      const database = teardown.add(await freshDatabase('sqlite'), (db) => db.drop());
      const redis = teardown.add(await freshRedis(REDIS_DB), (r) => r.close());
      const proxy = teardown.add(proxyFor(redis.url, 6379), (p) => p.stop());
      await proxy.start();
      const env = {
        ...GENEROUS_LIMITS,
        ...database.env,
        RATE_LIMIT_REGISTRATION: `${REGISTRATIONS}/3600s`,
        LOG_LEVEL: 'warn',
        REDIS_URL: through(redis.url, proxy.port),
      };
      const server = teardown.add(await startServer(env), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS }), (c) => c.close());
      const probe = teardown.add(new HttpClient(server.baseUrl, { sockets: 1 }), (c) => c.close());
      const redisCheck = async () => JSON.parse((await probe.send({ path: '/api/v1/health' })).body).checks?.redis as string;
      await waitFor('redis up in health', async () => (await redisCheck()) === 'up', RECONNECT_BOUND_MS);
      const registrations = async (count: number) => {
        const statuses: number[] = [];
        for (let i = 0; i < count; i++) statuses.push((await register(probe)).status);
        return statuses;
      };
      /** The service's anonymous counters in Redis (one per client address): they grow only while Redis is in use. */
      const sharedHits = async () => {
        const keys = await redis.redis.keys('leads:ratelimit:anonymous:*');
        return keys.length ? (await redis.redis.mget(keys)).reduce((sum, hits) => sum + Number(hits), 0) : 0;
      };

      const ledger = new LeadLedger();
      const phases = { before: new Tally(), cut: new Tally(), after: new Tally() };
      client.tally = phases.before;
      const loadEnds = new AbortController();
      const load = runLoad(CLIENTS, { signal: loadEnds.signal }, () => ledger.post(client));
      await sleep(PHASE_MS);
      const registeredBefore = await registrations(2);
      const hitsBefore = await sharedHits();

      await proxy.stop();
      client.tally = phases.cut;
      // What reached Redis before the cut, counted once the last of it has landed.
      await sleep(100);
      const hitsAtCut = await sharedHits();
      await sleep(OUTAGE_MS / 2);
      const healthCut: Reply = await probe.send({ path: '/api/v1/health' });
      // Counted in this instance from zero: the whole quota, then 429.
      const registeredCut = await registrations(REGISTRATIONS + 1);
      await sleep(OUTAGE_MS / 2);
      const hitsCut = await sharedHits();

      await proxy.start();
      const reconnectedInMs = await waitFor('redis up again in health', async () => (await redisCheck()) === 'up', RECONNECT_BOUND_MS);
      client.tally = phases.after;
      // Counted in Redis again, where the two of before are: the rest of the quota, then 429.
      const registeredAfter = await registrations(REGISTRATIONS - 1);
      await sleep(PHASE_MS);
      loadEnds.abort();
      await load;
      const hitsAfter = await sharedHits();
      const logs = logSummary(server.output());
      await server.stop('SIGTERM');
      const { stored, missing } = await ledger.verify(database);

      report('4. Redis stopped under load', [
        `${CLIENTS} clients; Redis cut for ${OUTAGE_MS / 1000} s through a TCP proxy; back in use ${(reconnectedInMs / 1000).toFixed(1)} s after it returned`,
        `before: ${phases.before.summary()}`,
        `cut: ${phases.cut.summary()}`,
        `after: ${phases.after.summary()}`,
        `health while cut: ${healthCut.status} ${healthCut.body}`,
        `registrations (quota ${REGISTRATIONS}): before ${registeredBefore.join(' ')}; cut ${registeredCut.join(' ')}; after ${registeredAfter.join(' ')}`,
        `anonymous hits counted in Redis: ${hitsAtCut} at the cut, ${hitsCut} at its end, ${hitsAfter} after`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201, ${stored} rows stored, ${missing.length} missing`,
        `server log: ${logs}`,
      ]);

      for (const phase of Object.values(phases)) {
        expect(phase.others([201])).toEqual({});
        expect(phase.maxMs).toBeLessThanOrEqual(ANSWER_BOUND_MS);
      }
      expect(hitsBefore).toBeGreaterThan(0);
      expect([healthCut.status, JSON.parse(healthCut.body)]).toEqual([
        200,
        {
          status: 'degraded',
          reasons: ['redis_down'],
          version: expect.any(String),
          checks: { database: 'up', redis: 'down' },
          outbox: expect.objectContaining({ webhook: expect.objectContaining({ pending: expect.any(Number) }) }),
          webhooks: expect.objectContaining({ pending: expect.any(Number) }),
        },
      ]);
      expect(registeredBefore).toEqual([200, 200]);
      expect(registeredCut).toEqual([...Array(REGISTRATIONS).fill(200), 429]);
      expect(hitsCut).toBe(hitsAtCut);
      expect(registeredAfter).toEqual([...Array(REGISTRATIONS - 2).fill(200), 429]);
      expect(hitsAfter).toBeGreaterThan(hitsCut);
      expect(missing).toEqual([]);
      expect(stored).toBe(ledger.acknowledged.size);
    },
    2 * PHASE_MS + OUTAGE_MS + 2 * RECONNECT_BOUND_MS + 60_000,
  );
});
