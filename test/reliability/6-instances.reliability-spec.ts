import { freshDatabase, TestDatabase } from '../support/database.js';
import { GENEROUS_LIMITS, ServerProcess, startServer } from '../support/server-process.js';
import { HttpClient, Reply } from './support/http-client.js';
import { agentToken, LeadLedger } from './support/leads.js';
import { runLoad, Teardown, waitFor } from './support/load.js';
import { seconds } from './support/mode.js';
import { logSummary, report } from './support/report.js';
import { RoundRobinProxy } from './support/round-robin-proxy.js';
import { freshRedis, TEST_DATABASE_URL, TEST_REDIS_URL, TestRedis } from './support/services.js';
import { Tally } from './support/tally.js';

const ANONYMOUS_QUOTA = 20;
const CLIENTS = 50;
const WARMUP_MS = seconds(1, 3);
const THROUGHPUT_MS = seconds(5, 20);
const REDIS_DB = 12;

(TEST_DATABASE_URL && TEST_REDIS_URL ? describe : describe.skip)('scenario 6: two instances behind a round-robin proxy, on PostgreSQL and Redis', () => {
  const teardown = new Teardown();
  let database: TestDatabase;
  let redis: TestRedis;
  let instances: ServerProcess[];
  let direct: HttpClient[];
  let proxy: RoundRobinProxy;
  let balanced: HttpClient;
  const ledger = new LeadLedger();
  /** Leads answered 201 through the proxy, by the instance that served them. */
  const servedBy = new Map<string, number>();

  /** A lead through the proxy, booked in the ledger and by instance. */
  const leadThroughProxy = async (token?: string): Promise<Reply> => {
    const reply = await ledger.post(balanced, { token });
    const upstream = String(reply.headers['x-upstream']);
    if (reply.status === 201) servedBy.set(upstream, (servedBy.get(upstream) ?? 0) + 1);
    return reply;
  };

  beforeAll(async () => {
    database = teardown.add(await freshDatabase('postgres'), (db) => db.drop());
    redis = teardown.add(await freshRedis(REDIS_DB), (r) => r.close());
    proxy = teardown.add(new RoundRobinProxy(), (p) => p.stop());
    await proxy.start();
    const env = {
      ...GENEROUS_LIMITS,
      ...database.env,
      // One public origin for both, as behind any load balancer: the issuer and audience of every token.
      PUBLIC_BASE_URL: proxy.baseUrl,
      RATE_LIMIT_ANONYMOUS: `${ANONYMOUS_QUOTA}/60s`,
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      KEEP_ALIVE_TIMEOUT: String(RoundRobinProxy.IDLE_TIMEOUT_S + 5),
      LOG_LEVEL: 'warn',
    };
    // Started together, as a deployment would: migrations and the first signing keys race.
    instances = await Promise.all([startServer(env), startServer(env)]);
    for (const instance of instances) teardown.add(instance, (s) => s.stop('SIGKILL'));
    direct = instances.map((instance) => teardown.add(new HttpClient(instance.baseUrl, { sockets: 4 }), (c) => c.close()));
    for (const client of direct) {
      await waitFor('redis up in health', async () => JSON.parse((await client.send({ path: '/api/v1/health' })).body).checks?.redis === 'up', 10_000);
    }
    proxy.route(instances.map((instance) => instance.baseUrl));
    balanced = teardown.add(new HttpClient(proxy.baseUrl, { sockets: CLIENTS }), (c) => c.close());
  }, 60_000);

  afterAll(() => teardown.run());

  it(`share one anonymous quota: request ${ANONYMOUS_QUOTA + 1} is refused whichever instance it reaches`, async () => {
    const answers: [number, string][] = [];
    for (let i = 0; i < ANONYMOUS_QUOTA + 2; i++) {
      const reply = await leadThroughProxy();
      answers.push([reply.status, String(reply.headers['x-upstream'])]);
    }
    expect(answers.map(([status]) => status)).toEqual([...Array(ANONYMOUS_QUOTA).fill(201), 429, 429]);
    const [a, b] = instances.map((instance) => instance.baseUrl);
    expect(new Set(answers.slice(0, ANONYMOUS_QUOTA).map(([, upstream]) => upstream))).toEqual(new Set([a, b]));
    expect(new Set(answers.slice(ANONYMOUS_QUOTA).map(([, upstream]) => upstream))).toEqual(new Set([a, b]));
  });

  it('accept on one instance the tokens issued by the other', async () => {
    const [a, b] = direct;
    const registeredOnAExchangedOnB = await agentToken(a, b);
    const issuedByB = await agentToken(b);
    for (const [token, client] of [
      [registeredOnAExchangedOnB, a],
      [registeredOnAExchangedOnB, b],
      [issuedByB, a],
    ] as const) {
      expect((await ledger.post(client, { token })).status).toBe(201);
    }
  });

  it(
    'serve leads through the proxy at some rate with one instance and with two (printed, not asserted)',
    async () => {
      const token = await agentToken(direct[0]);
      const measure = async (upstreams: ServerProcess[], durationMs: number) => {
        proxy.route(upstreams.map((instance) => instance.baseUrl));
        balanced.tally = new Tally();
        const elapsed = await runLoad(CLIENTS, { durationMs }, () => leadThroughProxy(token));
        return { tally: balanced.tally, elapsed, rate: balanced.tally.count(201) / (elapsed / 1000) };
      };
      await measure(instances, WARMUP_MS);
      const one = await measure(instances.slice(0, 1), THROUGHPUT_MS);
      const two = await measure(instances, THROUGHPUT_MS);
      report('6. Two instances behind a round-robin proxy', [
        `${CLIENTS} clients, agent-token leads through the proxy, ${THROUGHPUT_MS / 1000} s each (load generator and proxy share the machine's cores with the instances and PostgreSQL)`,
        `one instance: ${Math.round(one.rate)} leads/s; ${one.tally.summary(one.elapsed)}`,
        `two instances: ${Math.round(two.rate)} leads/s (×${(two.rate / one.rate).toFixed(2)}); ${two.tally.summary(two.elapsed)}`,
        `server logs: ${instances.map((instance) => logSummary(instance.output())).join(' | ')}`,
      ]);
      expect(one.tally.others([201])).toEqual({});
      expect(two.tally.others([201])).toEqual({});
    },
    2 * THROUGHPUT_MS + WARMUP_MS + 60_000,
  );

  it('store the leads of both instances in one table, each one acknowledged', async () => {
    const { stored, missing } = await ledger.verify(database);
    report('6. Two instances: one table', [
      `leads: ${ledger.acknowledged.size} acknowledged with 201 (through the proxy: ${[...servedBy].map(([upstream, count]) => `${count} by ${upstream}`).join(', ')}), ${stored} rows stored, ${missing.length} missing`,
    ]);
    expect([...servedBy.values()]).toEqual([expect.any(Number), expect.any(Number)]);
    expect(missing).toEqual([]);
    expect(stored).toBe(ledger.acknowledged.size);
  });
});
