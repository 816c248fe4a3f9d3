import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createLogger, NestPinoLogger } from '../logging/logger.js';
import { DataSource } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { AppConfig, loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import type { AttemptOutcome, Channel, ClaimedDelivery, Subscriber, Subscription } from './channel.js';
import { OutboxStore } from './outbox-store.js';
import { OutboxWorker } from './outbox-worker.service.js';
import { Metrics } from '../telemetry/metrics.js';

/**
 * The outbox's store and worker against a real database, with channels of the test's own: the first one's subscribers
 * are rows of webhook_endpoints, a second one's rows of a table the test makes; their attempts answer what each test
 * scripts.
 */
const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

type Script = (delivery: ClaimedDelivery) => AttemptOutcome | Promise<AttemptOutcome>;
/** The second channel's subscribers: a table of the test's own, as another channel's module would have. */
const OTHER_TABLE = 'outbox_spec_subscribers';
const DETAIL = { statusCode: null, error: null, latencyMs: 1, responseBody: null };

class ScriptedChannel implements Channel {
  readonly subscribers: Channel['subscribers'];
  readonly attemptTimeoutMs = 1000;
  readonly disableAfterSetting = 'SCRIPTED_DISABLE_AFTER';
  readonly subscriberConcurrency = 4;
  readonly scripts = new Map<string, Script>();
  readonly attempts: { messageId: string; subscriberId: string }[] = [];
  private readonly sql: StepTransactions;

  constructor(
    dataSource: DataSource,
    readonly retrySchedule: readonly number[],
    readonly disableAfterMs: number,
    readonly name = 'scripted',
    private readonly table = 'webhook_endpoints',
  ) {
    this.sql = new StepTransactions(dataSource);
    this.subscribers = { table, enabled: (alias: string) => `${alias}.status = 'enabled'` };
  }

  *subscriptions(): Steps<Subscription[]> {
    const rows = yield [`SELECT id, events, status, created_at FROM ${this.table}`, []];
    return rows.map((row) => ({
      id: row.id as string,
      events: JSON.parse(row.events as string) as string[],
      enabled: row.status === 'enabled',
      createdAt: Number(row.created_at),
    }));
  }

  async hasSubscribers(): Promise<boolean> {
    return (await this.sql.query(`SELECT id FROM ${this.table} LIMIT 1`)).length > 0;
  }

  async load(ids: readonly string[]): Promise<Map<string, Subscriber>> {
    const rows = await this.sql.query(`SELECT id, status, failing_since FROM ${this.table} WHERE id IN (${this.sql.list(1, ids.length)})`, [...ids]);
    return new Map(
      rows.map((row) => [
        row.id as string,
        { id: row.id as string, enabled: row.status === 'enabled', failingSince: row.failing_since === null ? null : Number(row.failing_since) },
      ]),
    );
  }

  async attempt(delivery: ClaimedDelivery & { payload: string }): Promise<AttemptOutcome> {
    this.attempts.push({ messageId: delivery.messageId, subscriberId: delivery.subscriberId });
    return (this.scripts.get(delivery.subscriberId) ?? (() => ({ kind: 'succeeded', ...DETAIL })))(delivery);
  }

  failing(id: string, now: number): Step {
    return [`UPDATE ${this.table} SET failing_since = ${this.sql.p(1)} WHERE id = ${this.sql.p(2)} AND failing_since IS NULL`, [now, id]];
  }

  recovered(id: string): Step {
    return [`UPDATE ${this.table} SET failing_since = NULL WHERE id = ${this.sql.p(1)}`, [id]];
  }

  disable(id: string, reason: string, now: number): Step {
    const p = this.sql.p.bind(this.sql);
    return [`UPDATE ${this.table} SET status = 'disabled', disabled_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)}`, [reason, now, id]];
  }
}

/** The JSON lines the worker logged, through the service's own logger. */
const logged: Record<string, unknown>[] = [];
const WARN = 40;
const ERROR = 50;

describe.each(kinds)('the outbox on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  let store: OutboxStore;
  let sql: StepTransactions;
  const p = (n: number) => (kind === 'postgres' ? `$${n}` : '?');

  beforeAll(async () => {
    Logger.overrideLogger(new NestPinoLogger(createLogger('warn', { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) })));
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env, WEBHOOK_POLL_INTERVAL: '20ms' });
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);
    store = new OutboxStore(dataSource);
    sql = new StepTransactions(dataSource);
    await sql.query(`CREATE TABLE ${OTHER_TABLE} (id varchar(36) PRIMARY KEY, events varchar(1024) NOT NULL, status varchar(16) NOT NULL,
      disabled_reason varchar(1000), failing_since bigint, created_at bigint NOT NULL, updated_at bigint NOT NULL)`);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    logged.length = 0;
    for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_messages', 'webhook_endpoints', OTHER_TABLE])
      await sql.query(`DELETE FROM ${table}`);
  });

  async function subscriber(events: string[], options: { status?: string; createdAt?: number; failingSince?: number; table?: string } = {}): Promise<string> {
    const id = uuidv7();
    const createdAt = options.createdAt ?? Date.now() - 60_000;
    const values = [id, JSON.stringify(events), options.status ?? 'enabled', options.failingSince ?? null, createdAt, createdAt];
    await (options.table === OTHER_TABLE
      ? sql.query(
          `INSERT INTO ${OTHER_TABLE} (id, events, status, failing_since, created_at, updated_at) VALUES (${[1, 2, 3, 4, 5, 6].map(p).join(', ')})`,
          values,
        )
      : sql.query(
          `INSERT INTO webhook_endpoints (id, events, status, failing_since, created_at, updated_at, url, secret) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(', ')})`,
          [...values, 'https://receiver.example/hook', 'sealed'],
        ));
    return id;
  }

  const publish = (type: string, data: unknown = { lead_ids: [] }, now = Date.now(), subscriberId: string | null = null) =>
    store.transaction(() => store.publish(type, data, now, subscriberId));
  const deliveries = () =>
    sql.query<{ message_id: string; endpoint_id: string; channel: string; state: string; step: unknown; attempts: unknown; next_attempt_at: unknown }>(
      'SELECT message_id, endpoint_id, channel, state, step, attempts, next_attempt_at FROM webhook_deliveries ORDER BY endpoint_id',
    );
  const attemptLog = () =>
    sql.query<{ endpoint_id: string; channel: string; outcome: string; attempt: unknown; error: string | null; next_attempt_at: unknown }>(
      'SELECT endpoint_id, channel, outcome, attempt, error, next_attempt_at FROM webhook_attempts ORDER BY attempted_at, id',
    );

  it('on SQLite, starts only when every subscriber table moves the change count, which any write to it does', async () => {
    if (kind === 'postgres') return;
    const webhooks = new ScriptedChannel(dataSource, [], 60_000);
    await expect(store.checkChangeTriggers([webhooks])).resolves.toBeUndefined();
    await expect(store.checkChangeTriggers([webhooks, new ScriptedChannel(dataSource, [], 60_000, 'other', OTHER_TABLE)])).rejects.toThrow(
      `outbox: the other channel's table ${OTHER_TABLE} has no trigger moving outbox_subscriber_changes after INSERT, UPDATE, DELETE`,
    );
    const before = store.subscriberChanges();
    const id = uuidv7();
    await sql.query(
      `INSERT INTO webhook_endpoints (id, url, secret, events, status, created_at, updated_at) VALUES (?, 'http://x.test', 's', '[]', 'enabled', 1, 1)`,
      [id],
    );
    await sql.query(`UPDATE webhook_endpoints SET failing_since = 5 WHERE id = ?`, [id]);
    await sql.query(`DELETE FROM webhook_endpoints WHERE id = ?`, [id]);
    expect(store.subscriberChanges()).toBe(before + 3);
  });

  it('fans a message out to each subscriber of its event that existed when it was written: pending, or skipped when disabled', async () => {
    const now = Date.now();
    const a = await subscriber(['lead.erased']);
    const b = await subscriber(['lead.received', 'lead.erased']);
    const off = await subscriber(['lead.erased'], { status: 'disabled' });
    await subscriber(['lead.received']);
    await subscriber(['lead.erased'], { createdAt: now + 60_000 });
    const id = await publish('lead.erased', { lead_ids: ['x'] }, now);

    expect(await store.fanOut([new ScriptedChannel(dataSource, [], 60_000)], now)).toBe(1);
    expect(await store.fanOut([new ScriptedChannel(dataSource, [], 60_000)], now)).toBe(0);
    const rows = await deliveries();
    expect(rows.map((row) => [row.message_id, row.endpoint_id, row.state])).toEqual(
      [
        [id, a, 'pending'],
        [id, b, 'pending'],
        [id, off, 'skipped'],
      ].sort((x, y) => x[1].localeCompare(y[1])),
    );
    expect(await attemptLog()).toEqual([expect.objectContaining({ endpoint_id: off, outcome: 'skipped', error: 'endpoint_disabled' })]);
  });

  it('leases a due delivery to one worker only, until its lease runs out', async () => {
    const channel = new ScriptedChannel(dataSource, [], 60_000);
    const ids = [await subscriber(['lead.received']), await subscriber(['lead.received'])];
    for (let i = 0; i < 5; i++) await publish('lead.received');
    const now = Date.now();
    await store.fanOut([channel], now);
    // Two instances: on PostgreSQL two connections pools, so the two statements really race.
    const other = kind === 'postgres' ? await new DataSource(dataSourceOptions(config)).initialize() : dataSource;
    try {
      const second = new OutboxStore(other);
      const [x, y] = await Promise.all([store.claim(channel, 'one', now, now + 5000, 7), second.claim(channel, 'two', now, now + 5000, 7)]);
      const key = (d: ClaimedDelivery) => `${d.messageId}/${d.subscriberId}`;
      expect(x.length + y.length).toBe(10);
      expect(new Set([...x, ...y].map(key)).size).toBe(10);
      expect(new Set([...x, ...y].map((d) => d.subscriberId))).toEqual(new Set(ids));
      expect(await store.claim(channel, 'three', now + 4999, now + 9999, 10)).toEqual([]);
      const after = await second.claim(channel, 'three', now + 5001, now + 9999, 10);
      expect(after.map(key).sort()).toEqual([...x, ...y].map(key).sort());
    } finally {
      if (other !== dataSource) await other.destroy();
    }
  });

  describe('its worker', () => {
    let worker: OutboxWorker | undefined;
    afterEach(async () => {
      await worker?.onModuleDestroy();
      worker = undefined;
    });

    async function run(...channels: ScriptedChannel[]): Promise<void> {
      await runWith(config, ...channels);
    }

    async function runWith(settings: AppConfig, ...channels: ScriptedChannel[]): Promise<void> {
      worker = new OutboxWorker(settings, store, new Metrics(false));
      for (const channel of channels) worker.register(channel);
      await worker.onApplicationBootstrap();
    }

    async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
      for (let waited = 0; ; waited += 20) {
        const value = await read();
        if (done(value)) return value;
        if (waited > 10_000) throw new Error(`still ${JSON.stringify(value)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    it('delivers each message once to each subscriber and logs the attempt', async () => {
      const channel = new ScriptedChannel(dataSource, [1000], 60_000);
      const a = await subscriber(['lead.received']);
      const b = await subscriber(['lead.received']);
      const messages = [await publish('lead.received'), await publish('lead.received')];
      await run(channel);
      const rows = await until(deliveries, (rows) => rows.length === 4 && rows.every((row) => row.state === 'delivered'));
      expect(rows.map((row) => Number(row.attempts))).toEqual([1, 1, 1, 1]);
      expect(channel.attempts.map((x) => `${x.messageId}/${x.subscriberId}`).sort()).toEqual(messages.flatMap((m) => [a, b].map((s) => `${m}/${s}`)).sort());
      expect((await attemptLog()).map((row) => row.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    });

    it('leases nothing for a channel while every subscriber of it is busy here, and goes on when one has room', async () => {
      const channel = new ScriptedChannel(dataSource, [1000], 60_000);
      const release: (() => void)[] = [];
      let released = false;
      const only = await subscriber(['lead.received']);
      channel.scripts.set(only, () =>
        released ? { kind: 'succeeded', ...DETAIL } : new Promise((resolve) => release.push(() => resolve({ kind: 'succeeded', ...DETAIL }))),
      );
      for (let i = 0; i < 10; i++) await publish('lead.received');
      const claims = jest.spyOn(store, 'claim');
      try {
        await run(channel);
        await until(
          async () => release.length,
          (n) => n >= channel.subscriberConcurrency,
        );
        const before = claims.mock.calls.length;
        for (let i = 0; i < 5; i++) {
          worker!.wake();
          await new Promise((resolve) => setTimeout(resolve, 30));
        }
        expect(claims.mock.calls.length).toBe(before);
        released = true;
        for (const done of release.splice(0)) done();
        const rows = await until(deliveries, (rows) => rows.length === 10 && rows.every((row) => row.state === 'delivered'));
        expect(rows.map((row) => Number(row.attempts))).toEqual(Array(10).fill(1));
      } finally {
        released = true;
        for (const done of release) done();
        claims.mockRestore();
      }
    });

    it("retries on the channel's schedule, and no sooner than the channel asks", async () => {
      const channel = new ScriptedChannel(dataSource, [10_000, 20_000], 3_600_000);
      const scheduled = await subscriber(['lead.received']);
      const asked = await subscriber(['lead.received']);
      channel.scripts.set(scheduled, () => ({ kind: 'retry', ...DETAIL, statusCode: 500 }));
      channel.scripts.set(asked, () => ({ kind: 'retry', afterMs: 600_000, ...DETAIL, statusCode: 429 }));
      const before = Date.now();
      await publish('lead.received');
      await run(channel);
      const rows = await until(deliveries, (rows) => rows.length === 2 && rows.every((row) => Number(row.attempts) === 1));
      const byId = new Map(rows.map((row) => [row.endpoint_id, row]));
      const after = Date.now();
      expect(byId.get(scheduled)).toMatchObject({ state: 'pending' });
      expect(Number(byId.get(scheduled)!.step)).toBe(1);
      // 10 s ± 20 % jitter.
      expect(Number(byId.get(scheduled)!.next_attempt_at)).toBeGreaterThanOrEqual(before + 8_000);
      expect(Number(byId.get(scheduled)!.next_attempt_at)).toBeLessThanOrEqual(after + 12_000);
      expect(Number(byId.get(asked)!.next_attempt_at)).toBeGreaterThanOrEqual(before + 600_000);
      const log = await attemptLog();
      expect(log).toHaveLength(2);
      for (const row of log) expect(row).toMatchObject({ outcome: 'failed' });
      expect(log.every((row) => row.next_attempt_at !== null)).toBe(true);
      expect(channel.attempts).toHaveLength(2);
      // One warn line per failed attempt, with ids and the next attempt, nothing of the subscriber's address.
      const lines = logged.filter((line) => line.msg === 'delivery attempt failed');
      expect(lines.map((line) => line.level)).toEqual([WARN, WARN]);
      expect(lines).toEqual(
        expect.arrayContaining(
          [scheduled, asked].map((id) =>
            expect.objectContaining({ channel: 'scripted', subscriber_id: id, outcome: 'retry', next_attempt_at: expect.stringMatching(/^\d{4}-.*Z$/) }),
          ),
        ),
      );
      expect(JSON.stringify(logged)).not.toContain('receiver.example');
    });

    it('fails a delivery for good on a permanent failure, and when the schedule is spent', async () => {
      const channel = new ScriptedChannel(dataSource, [30], 3_600_000);
      const permanent = await subscriber(['lead.received']);
      const spent = await subscriber(['lead.received']);
      channel.scripts.set(permanent, () => ({ kind: 'failed', ...DETAIL, error: 'rejected' }));
      channel.scripts.set(spent, () => ({ kind: 'retry', ...DETAIL, error: 'busy' }));
      await publish('lead.received');
      await run(channel);
      const rows = await until(deliveries, (rows) => rows.length === 2 && rows.every((row) => row.state === 'failed'));
      const byId = new Map(rows.map((row) => [row.endpoint_id, row]));
      expect(Number(byId.get(permanent)!.attempts)).toBe(1);
      expect(Number(byId.get(spent)!.attempts)).toBe(2);
      expect(rows.every((row) => row.next_attempt_at === null)).toBe(true);
      const log = await attemptLog();
      expect(log.filter((row) => row.endpoint_id === permanent)).toEqual([
        expect.objectContaining({ outcome: 'failed', error: 'rejected', next_attempt_at: null }),
      ]);
      expect(log.filter((row) => row.endpoint_id === spent).map((row) => row.next_attempt_at === null)).toEqual([false, true]);
      // Failing subscribers are marked, not disabled, before their time is up.
      const endpoints = await sql.query<{ status: string; failing_since: unknown }>('SELECT status, failing_since FROM webhook_endpoints');
      expect(endpoints.every((row) => row.status === 'enabled' && row.failing_since !== null)).toBe(true);
    });

    it('disables a subscriber the channel says is gone, and one failing for longer than allowed; their pending deliveries are skipped', async () => {
      const channel = new ScriptedChannel(dataSource, [3_600_000], 60_000);
      const gone = await subscriber(['lead.received']);
      const failing = await subscriber(['lead.received'], { failingSince: Date.now() - 120_000 });
      const healthy = await subscriber(['lead.received'], { failingSince: Date.now() - 120_000 });
      channel.scripts.set(gone, () => ({ kind: 'failed', disable: 'gone for good', ...DETAIL, statusCode: 410 }));
      channel.scripts.set(failing, () => ({ kind: 'retry', ...DETAIL, statusCode: 500 }));
      await publish('lead.received');
      await run(channel);
      const endpoints = await until(
        () =>
          sql.query<{ id: string; status: string; disabled_reason: string | null; failing_since: unknown }>(
            'SELECT id, status, disabled_reason, failing_since FROM webhook_endpoints',
          ),
        (rows) => rows.filter((row) => row.status === 'disabled').length === 2 && rows.some((row) => row.id === healthy && row.failing_since === null),
      );
      const byId = new Map(endpoints.map((row) => [row.id, row]));
      expect(byId.get(gone)!.disabled_reason).toBe('gone for good');
      expect(byId.get(failing)!.disabled_reason).toMatch(/^No successful delivery since \d{4}-.*Z \(SCRIPTED_DISABLE_AFTER\)\.$/);
      expect(byId.get(healthy)).toMatchObject({ status: 'enabled', failing_since: null });
      const disabledLines = logged.filter((line) => line.msg === 'subscriber disabled');
      expect(disabledLines.map((line) => [line.level, line.subscriber_id, line.cause]).sort()).toEqual(
        [
          [ERROR, gone, 'gone'],
          [ERROR, failing, 'failing_too_long'],
        ].sort(),
      );
      // The channel's own words (a receiver's answer, an SMTP reply) stay in the attempt log and the reason, out of the logs.
      expect(JSON.stringify(logged)).not.toContain('gone for good');
      // The attempt that disabled it failed, and says so at warn: one line per failed attempt, whatever follows.
      const failedOf = (id: string) => logged.filter((line) => line.msg === 'delivery attempt failed' && line.subscriber_id === id);
      expect(failedOf(gone)).toEqual([expect.objectContaining({ level: WARN, channel: 'scripted', outcome: 'failed', next_attempt_at: null })]);

      // What a disabled subscriber has waiting is skipped, not attempted, and logged as such.
      const tried = channel.attempts.length;
      await sql.query(`UPDATE webhook_deliveries SET next_attempt_at = ${p(1)} WHERE endpoint_id = ${p(2)}`, [Date.now(), failing]);
      await publish('lead.received');
      worker!.wake();
      const rows = await until(deliveries, (rows) => rows.filter((row) => row.state === 'skipped').length === 3);
      expect(rows.filter((row) => row.state === 'skipped').every((row) => row.endpoint_id !== healthy)).toBe(true);
      expect(channel.attempts.slice(tried).every((x) => x.subscriberId === healthy)).toBe(true);
      const skips = (await attemptLog()).filter((row) => row.outcome === 'skipped');
      expect(skips).toHaveLength(3);
      expect(skips.every((row) => row.error === 'endpoint_disabled')).toBe(true);
    });

    describe('with two channels', () => {
      const two = () => [
        new ScriptedChannel(dataSource, [3_600_000], 3_600_000),
        new ScriptedChannel(dataSource, [3_600_000], 3_600_000, 'other', OTHER_TABLE),
      ];

      it('fans a message out to the subscribers of both, and a message for one subscriber to whichever channel has it', async () => {
        const [first, second] = two();
        const a = await subscriber(['lead.received']);
        const b = await subscriber(['lead.received'], { table: OTHER_TABLE });
        const off = await subscriber(['lead.received'], { table: OTHER_TABLE, status: 'disabled' });
        await subscriber(['lead.erased'], { table: OTHER_TABLE });
        const message = await publish('lead.received');
        const aimed = await publish('notification.test', {}, Date.now(), b);
        expect(await store.fanOut([first, second], Date.now())).toBe(2);
        const rows = await deliveries();
        const key = (row: { message_id: string; endpoint_id: string; channel: string; state: string }) =>
          [row.message_id, row.endpoint_id, row.channel, row.state].join(' ');
        expect(rows.map(key).sort()).toEqual(
          [`${message} ${a} scripted pending`, `${message} ${b} other pending`, `${message} ${off} other skipped`, `${aimed} ${b} other pending`].sort(),
        );
        expect(await attemptLog()).toEqual([expect.objectContaining({ endpoint_id: off, channel: 'other', outcome: 'skipped' })]);
      });

      it('leases, records, replays and forgets each channel by its own name', async () => {
        const [first, second] = two();
        const a = await subscriber(['lead.received']);
        const b = await subscriber(['lead.received'], { table: OTHER_TABLE });
        await publish('lead.received');
        const now = Date.now();
        await store.fanOut([first, second], now);
        expect((await store.claim(first, 'one', now, now + 50, 10)).map((d) => [d.channel, d.subscriberId])).toEqual([['scripted', a]]);
        expect((await store.claim(second, 'one', now, now + 50, 10)).map((d) => [d.channel, d.subscriberId])).toEqual([['other', b]]);

        await run(first, second);
        await until(deliveries, (rows) => rows.every((row) => row.state === 'delivered'));
        // The leases above ran out first: the worker took them over.
        expect((await attemptLog()).map((row) => [row.endpoint_id, row.channel, row.outcome]).sort()).toEqual(
          [
            [a, 'scripted', 'succeeded'],
            [b, 'other', 'succeeded'],
          ].sort(),
        );
        expect((await store.attempts(second, b, 10)).map((row) => row.event_type)).toEqual(['lead.received']);
        expect(await store.attempts(first, b, 10)).toEqual([]);
        expect(await store.replay(first, b, 0, undefined, Date.now())).toBe(0);
        await store.forgetSubscriber(first, b);
        expect((await deliveries()).map((row) => row.endpoint_id).sort()).toEqual([a, b].sort());
        await store.forgetSubscriber(second, b);
        expect((await deliveries()).map((row) => row.endpoint_id)).toEqual([a]);
        expect((await attemptLog()).map((row) => row.endpoint_id)).toEqual([a]);
      }, 20_000);

      it('keeps delivering one channel while every attempt of the other hangs or fails', async () => {
        const [slow, fast] = two();
        const release: (() => void)[] = [];
        let released = false;
        const hung = await subscriber(['lead.received']);
        slow.scripts.set(hung, () =>
          released ? { kind: 'retry', ...DETAIL } : new Promise((resolve) => release.push(() => resolve({ kind: 'retry', ...DETAIL }))),
        );
        const failing = await subscriber(['lead.received'], { table: OTHER_TABLE });
        fast.scripts.set(failing, () => ({ kind: 'retry', ...DETAIL, statusCode: 451 }));
        for (let i = 0; i < 12; i++) await publish('lead.received');
        const settings = { ...config, webhooks: { ...config.webhooks, concurrency: 4 } };
        try {
          await runWith(settings, slow, fast);
          // The slow channel takes what it may, never the last slot.
          await until(
            async () => release.length,
            (n) => n >= 3,
          );
          const healthy = await subscriber(['lead.received'], { table: OTHER_TABLE });
          const later = [await publish('lead.received'), await publish('lead.received')];
          worker!.wake();
          const rows = await until(deliveries, (rows) =>
            later.every((id) => rows.some((r) => r.message_id === id && r.endpoint_id === healthy && r.state === 'delivered')),
          );
          expect(rows.filter((row) => row.endpoint_id === hung).every((row) => row.state === 'pending' && Number(row.attempts) === 0)).toBe(true);
          expect(rows.filter((row) => row.endpoint_id === failing).every((row) => row.state === 'pending' && Number(row.attempts) === 1)).toBe(true);
          expect(release.length).toBe(3);
          const failed = logged.filter((line) => line.msg === 'delivery attempt failed');
          // Each message's one attempt to the failing subscriber: the twelve, and the two sent later.
          expect(failed).toHaveLength(14);
          expect(failed.every((line) => line.level === WARN && line.channel === 'other' && line.subscriber_id === failing && line.outcome === 'retry')).toBe(
            true,
          );
        } finally {
          released = true;
          for (const done of release) done();
        }
      }, 30_000);

      it("cancels an erased lead's deliveries in every channel, pending and leased", async () => {
        const [first, second] = two();
        const a = await subscriber(['lead.received']);
        const b = await subscriber(['lead.received'], { table: OTHER_TABLE });
        first.scripts.set(a, () => ({ kind: 'retry', ...DETAIL }));
        const now = Date.now();
        const lead = uuidv7();
        await sql.query(
          `INSERT INTO webhook_messages (id, event_type, payload, lead_id, created_at, endpoint_id, dispatched_at) VALUES (${[1, 2, 3, 4, 5].map(p).join(', ')}, NULL, NULL)`,
          ['msg_erased', 'lead.received', '{}', lead, now],
        );
        const kept = await publish('lead.received');
        await run(first, second);
        // One channel retries later, the other delivered: both leave rows of the lead.
        await until(deliveries, (rows) => rows.length === 4 && rows.every((row) => Number(row.attempts) === 1));
        const forgotten = await store.transaction(() => store.forgetLeads([lead]));
        expect(forgotten).toEqual({ messageIds: ['msg_erased'], deliveries: 2, attempts: 2 });
        const rows = await deliveries();
        expect(rows.map((row) => [row.message_id, row.channel]).sort()).toEqual(
          [
            [kept, 'other'],
            [kept, 'scripted'],
          ].sort(),
        );
        expect((await attemptLog()).map((row) => [row.endpoint_id, row.channel]).sort()).toEqual(
          [
            [a, 'scripted'],
            [b, 'other'],
          ].sort(),
        );
      });
    });
  });
});
