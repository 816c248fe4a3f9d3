import 'reflect-metadata';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { AppConfig, loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import type { Channel } from './channel.js';
import { OutboxStore } from './outbox-store.js';

/** migrations/1765600000000-outbox-channels.ts over the outbox rows a service stored before it, on both databases. */
const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('1765600000000-outbox-channels on %s, over outbox rows stored before it', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  const at = MIGRATIONS.findIndex((migration) => migration.name.endsWith('1765600000000'));
  const sql = (text: string) => (kind === 'postgres' ? text : text.replace(/\$\d+/g, '?'));
  const endpoint = '0193a000-0000-7000-8000-000000000001';
  const now = Date.parse('2026-11-20T10:00:00.000Z');

  const indexes = async (): Promise<Record<string, string[]>> => {
    const rows = (await dataSource.query(
      kind === 'postgres'
        ? "SELECT tablename AS tbl, indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('webhook_deliveries', 'webhook_attempts')"
        : "SELECT tbl_name AS tbl, name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('webhook_deliveries', 'webhook_attempts')",
    )) as { tbl: string; name: string }[];
    const byTable: Record<string, string[]> = {};
    for (const row of rows) (byTable[row.tbl] ??= []).push(row.name);
    for (const names of Object.values(byTable)) names.sort();
    return byTable;
  };

  beforeAll(async () => {
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) } as DataSourceOptions).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it("names every delivery and attempt 'webhook', keeps every row and index, and lets a subscriber be another table's row", async () => {
    await runMigrations(dataSource);
    await dataSource.query(
      sql(
        `INSERT INTO webhook_endpoints (id, url, events, secret, status, created_at, updated_at) VALUES ($1, 'https://r.example/h', '["lead.received"]', 's', 'enabled', $2, $3)`,
      ),
      [endpoint, now, now],
    );
    for (const id of ['msg_a', 'msg_b']) {
      await dataSource.query(
        sql(`INSERT INTO webhook_messages (id, event_type, payload, lead_id, created_at, dispatched_at) VALUES ($1, 'lead.received', '{}', NULL, $2, $3)`),
        [id, now, now],
      );
    }
    await dataSource.query(
      sql(`INSERT INTO webhook_deliveries (message_id, endpoint_id, message_created_at, state, attempts, step, next_attempt_at, lease_owner, lease_until, updated_at)
        VALUES ('msg_a', $1, $2, 'pending', 1, 1, $3, 'w_old', $4, $5), ('msg_b', $6, $7, 'delivered', 1, 0, NULL, NULL, NULL, $8)`),
      [endpoint, now, now + 5000, now + 1000, now, endpoint, now, now],
    );
    await dataSource.query(
      sql(`INSERT INTO webhook_attempts (id, message_id, endpoint_id, event_type, attempt, attempted_at, outcome, status_code, error, latency_ms, response_body, next_attempt_at)
        VALUES ('0193a000-0000-7000-8000-0000000000a1', 'msg_a', $1, 'lead.received', 1, $2, 'failed', 500, NULL, 12, 'busy', $3)`),
      [endpoint, now, now + 5000],
    );
    const before = await indexes();
    const deliveries =
      'SELECT message_id, endpoint_id, message_created_at, state, attempts, step, next_attempt_at, lease_owner, lease_until, updated_at FROM webhook_deliveries ORDER BY message_id';
    const attempts = 'SELECT * FROM webhook_attempts';
    const deliveryRows = (await dataSource.query(deliveries)) as Record<string, unknown>[];
    const attemptRows = (await dataSource.query(attempts)) as Record<string, unknown>[];
    expect(deliveryRows).toHaveLength(2);

    await dataSource.destroy();
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);

    expect(await dataSource.query(deliveries)).toEqual(deliveryRows);
    expect(await dataSource.query(attempts)).toEqual(attemptRows.map((row) => ({ ...row, channel: 'webhook' })));
    expect(await dataSource.query('SELECT DISTINCT channel FROM webhook_deliveries')).toEqual([{ channel: 'webhook' }]);
    expect(await indexes()).toEqual(before);

    // A subscriber of another channel: no foreign key to webhook_endpoints any more, and the channel is required.
    const other = '0193a000-0000-7000-8000-000000000002';
    await dataSource.query(
      sql(`INSERT INTO webhook_deliveries (message_id, endpoint_id, channel, message_created_at, state, attempts, step, next_attempt_at, updated_at)
        VALUES ('msg_b', $1, 'email', $2, 'pending', 0, 0, $3, $4)`),
      [other, now, now, now],
    );
    await expect(
      dataSource.query(
        sql(
          `INSERT INTO webhook_deliveries (message_id, endpoint_id, message_created_at, state, attempts, step, updated_at) VALUES ('msg_a', $1, $2, 'pending', 0, 0, $3)`,
        ),
        [other, now, now],
      ),
    ).rejects.toThrow(/null|NOT NULL/i);
    // Deleting an endpoint no longer takes rows with it (OutboxStore.forgetSubscriber does, by channel).
    const store = new OutboxStore(dataSource);
    await store.forgetSubscriber({ name: 'email' }, endpoint);
    expect(((await dataSource.query(deliveries)) as unknown[]).length).toBe(3);
    await store.forgetSubscriber({ name: 'webhook' }, endpoint);
    expect(await dataSource.query('SELECT endpoint_id, channel FROM webhook_deliveries')).toEqual([{ endpoint_id: other, channel: 'email' }]);
    expect(await dataSource.query('SELECT id FROM webhook_attempts')).toEqual([]);
    // The messages' foreign key stays: a message deleted takes its deliveries.
    await dataSource.query("DELETE FROM webhook_messages WHERE id = 'msg_b'");
    expect(await dataSource.query('SELECT message_id FROM webhook_deliveries')).toEqual([]);
  });

  it("leases through the due index, on the channel's part of it", async () => {
    const channel = { name: 'webhook', subscribers: { table: 'webhook_endpoints', enabled: (alias: string) => `${alias}.status = 'enabled'` } } as Channel;
    const store = new OutboxStore(dataSource);
    const seen: string[] = [];
    const query = dataSource.query.bind(dataSource);
    const spy = jest.spyOn(dataSource, 'query').mockImplementation(async (text: string, params?: unknown) => {
      seen.push(text);
      return query(text, params as unknown[] | undefined);
    });
    try {
      await store.claim(channel, 'w', now, now + 1000, 10);
    } finally {
      spy.mockRestore();
    }
    const [lease] = seen;
    expect(lease).toMatch(/^UPDATE webhook_deliveries/);
    const plan = JSON.stringify(
      kind === 'postgres'
        ? await dataSource.transaction(async (manager) => {
            // With a handful of rows PostgreSQL would rightly scan: asked not to, it shows which index serves the query.
            await manager.query('SET LOCAL enable_seqscan = off');
            return manager.query(`EXPLAIN ${lease}`, ['w', now + 1000, 'webhook', now, now]);
          })
        : await dataSource.query(`EXPLAIN QUERY PLAN ${lease}`, ['w', now + 1000, 'webhook', now, now]),
    );
    expect(plan).toContain('webhook_deliveries_due_idx');
  });
});
