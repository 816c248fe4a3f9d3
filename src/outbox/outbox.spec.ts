import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { AppConfig, loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import type { AttemptOutcome, Channel, ClaimedDelivery, Subscriber, Subscription } from './channel.js';
import { OutboxStore } from './outbox-store.js';
import { OutboxWorker } from './outbox-worker.service.js';

/**
 * The outbox's store and worker against a real database, with a channel of the test's own: its subscribers are rows
 * of the subscriber table deliveries refer to today (webhook_endpoints), its attempts answer what each test scripts.
 */
const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

type Script = (delivery: ClaimedDelivery) => AttemptOutcome;
const DETAIL = { statusCode: null, error: null, latencyMs: 1, responseBody: null };

class ScriptedChannel implements Channel {
  readonly name = 'scripted';
  readonly subscribers = { table: 'webhook_endpoints', enabled: (alias: string) => `${alias}.status = 'enabled'` };
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
  ) {
    this.sql = new StepTransactions(dataSource);
  }

  *subscriptions(): Steps<Subscription[]> {
    const rows = yield ['SELECT id, events, status, created_at FROM webhook_endpoints', []];
    return rows.map((row) => ({
      id: row.id as string,
      events: JSON.parse(row.events as string) as string[],
      enabled: row.status === 'enabled',
      createdAt: Number(row.created_at),
    }));
  }

  async hasSubscribers(): Promise<boolean> {
    return (await this.sql.query('SELECT id FROM webhook_endpoints LIMIT 1')).length > 0;
  }

  async load(ids: readonly string[]): Promise<Map<string, Subscriber>> {
    const rows = await this.sql.query(`SELECT id, status, failing_since FROM webhook_endpoints WHERE id IN (${this.sql.list(1, ids.length)})`, [...ids]);
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
    return [`UPDATE webhook_endpoints SET failing_since = ${this.sql.p(1)} WHERE id = ${this.sql.p(2)} AND failing_since IS NULL`, [now, id]];
  }

  recovered(id: string): Step {
    return [`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${this.sql.p(1)}`, [id]];
  }

  disable(id: string, reason: string, now: number): Step {
    const p = this.sql.p.bind(this.sql);
    return [`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)}`, [reason, now, id]];
  }
}

/** What the worker logged, as Nest's Logger hands it over: the fields first, the message second. */
const logged: { level: string; fields: unknown; message: unknown }[] = [];
const capture = (level: string) => (fields: unknown, message?: unknown) => void logged.push({ level, fields, message });

describe.each(kinds)('the outbox on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  let store: OutboxStore;
  let sql: StepTransactions;
  const p = (n: number) => (kind === 'postgres' ? `$${n}` : '?');

  beforeAll(async () => {
    Logger.overrideLogger({ log: () => undefined, debug: () => undefined, verbose: () => undefined, warn: capture('warn'), error: capture('error') });
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env, WEBHOOK_POLL_INTERVAL: '20ms' });
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);
    store = new OutboxStore(dataSource);
    sql = new StepTransactions(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    logged.length = 0;
    for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_messages', 'webhook_endpoints']) await sql.query(`DELETE FROM ${table}`);
  });

  async function subscriber(events: string[], options: { status?: string; createdAt?: number; failingSince?: number } = {}): Promise<string> {
    const id = uuidv7();
    const createdAt = options.createdAt ?? Date.now() - 60_000;
    await sql.query(
      `INSERT INTO webhook_endpoints (id, url, events, secret, status, failing_since, created_at, updated_at) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(', ')})`,
      [id, 'https://receiver.example/hook', JSON.stringify(events), 'sealed', options.status ?? 'enabled', options.failingSince ?? null, createdAt, createdAt],
    );
    return id;
  }

  const publish = (type: string, data: unknown = { lead_ids: [] }, now = Date.now()) => store.transaction(() => store.publish(type, data, now));
  const deliveries = () =>
    sql.query<{ message_id: string; endpoint_id: string; state: string; step: unknown; attempts: unknown; next_attempt_at: unknown }>(
      'SELECT message_id, endpoint_id, state, step, attempts, next_attempt_at FROM webhook_deliveries ORDER BY endpoint_id',
    );
  const attemptLog = () =>
    sql.query<{ endpoint_id: string; outcome: string; attempt: unknown; error: string | null; next_attempt_at: unknown }>(
      'SELECT endpoint_id, outcome, attempt, error, next_attempt_at FROM webhook_attempts ORDER BY attempted_at, id',
    );

  it('fans a message out to each subscriber of its event that existed when it was written: pending, or skipped when disabled', async () => {
    const now = Date.now();
    const a = await subscriber(['lead.erased']);
    const b = await subscriber(['lead.received', 'lead.erased']);
    const off = await subscriber(['lead.erased'], { status: 'disabled' });
    await subscriber(['lead.received']);
    await subscriber(['lead.erased'], { createdAt: now + 60_000 });
    const id = await publish('lead.erased', { lead_ids: ['x'] }, now);

    expect(await store.fanOut(new ScriptedChannel(dataSource, [], 60_000), now)).toBe(1);
    expect(await store.fanOut(new ScriptedChannel(dataSource, [], 60_000), now)).toBe(0);
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
    await store.fanOut(channel, now);
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

    async function run(channel: ScriptedChannel): Promise<void> {
      worker = new OutboxWorker(config, store);
      worker.register(channel);
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
      const lines = logged.filter((line) => line.message === 'delivery attempt failed');
      expect(lines.map((line) => line.level)).toEqual(['warn', 'warn']);
      expect(lines.map((line) => line.fields)).toEqual(
        expect.arrayContaining(
          [scheduled, asked].map((id) =>
            expect.objectContaining({ channel: 'scripted', subscriber_id: id, outcome: 'retry', next_attempt_at: expect.stringMatching(/^\d{4}-.*Z$/) }),
          ),
        ),
      );
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
      const disabledLines = logged.filter((line) => line.message === 'subscriber disabled');
      expect(disabledLines.map((line) => [line.level, (line.fields as { subscriber_id: string }).subscriber_id]).sort()).toEqual(
        [
          ['error', gone],
          ['error', failing],
        ].sort(),
      );

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
  });
});
