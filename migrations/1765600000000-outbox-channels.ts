import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries and attempts name their channel (docs/decisions/0034-outbox-channels.md): `channel` on
 * webhook_deliveries and webhook_attempts (every row so far is a webhook's), and their foreign keys to
 * webhook_endpoints end, since a subscriber may now be a row of another channel's table (a channel deletes its
 * subscriber's rows itself: OutboxStore.forgetSubscriber). The deliveries keep their key (message, subscriber):
 * subscriber ids are UUIDs, unique across channels.
 *
 * The due index leads with `channel`: each channel leases its own due deliveries, and a backlog of one channel must
 * not be walked by the lease of another.
 *
 * SQLite cannot drop a foreign key: both tables are rebuilt, their rows copied and every index made again.
 */
export class OutboxChannels1765600000000 implements MigrationInterface {
  name = 'OutboxChannels1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') {
      for (const table of ['webhook_deliveries', 'webhook_attempts']) {
        await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN channel varchar(32) NOT NULL DEFAULT 'webhook'`);
        await queryRunner.query(`ALTER TABLE ${table} ALTER COLUMN channel DROP DEFAULT`);
        // The constraint's name is PostgreSQL's choice (CREATE TABLE … REFERENCES): found, not assumed.
        const keys = (await queryRunner.query(
          `SELECT c.conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
            WHERE c.contype = 'f' AND t.relname = $1 AND r.relname = 'webhook_endpoints' AND t.relnamespace = current_schema()::regnamespace`,
          [table],
        )) as { conname: string }[];
        for (const { conname } of keys) await queryRunner.query(`ALTER TABLE ${table} DROP CONSTRAINT "${conname}"`);
      }
    } else {
      await rebuild(
        queryRunner,
        'webhook_deliveries',
        `message_id varchar(40) NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
        endpoint_id varchar(36) NOT NULL,
        channel varchar(32) NOT NULL,
        message_created_at bigint NOT NULL,
        state varchar(16) NOT NULL,
        attempts integer NOT NULL,
        step integer NOT NULL,
        next_attempt_at bigint,
        lease_owner varchar(64),
        lease_until bigint,
        updated_at bigint NOT NULL,
        PRIMARY KEY (message_id, endpoint_id)`,
        'message_id, endpoint_id, message_created_at, state, attempts, step, next_attempt_at, lease_owner, lease_until, updated_at',
      );
      await rebuild(
        queryRunner,
        'webhook_attempts',
        `id varchar(36) PRIMARY KEY,
        message_id varchar(40) NOT NULL,
        endpoint_id varchar(36) NOT NULL,
        channel varchar(32) NOT NULL,
        event_type varchar(64) NOT NULL,
        attempt integer NOT NULL,
        attempted_at bigint NOT NULL,
        outcome varchar(16) NOT NULL,
        status_code integer,
        error varchar(500),
        latency_ms integer,
        response_body text,
        next_attempt_at bigint`,
        'id, message_id, endpoint_id, event_type, attempt, attempted_at, outcome, status_code, error, latency_ms, response_body, next_attempt_at',
      );
    }
    await queryRunner.query('DROP INDEX webhook_deliveries_due_idx');
    await queryRunner.query("CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (channel, next_attempt_at) WHERE state = 'pending'");
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Only webhook rows can go back to a table that refers to webhook_endpoints.
    for (const table of ['webhook_deliveries', 'webhook_attempts']) await queryRunner.query(`DELETE FROM ${table} WHERE channel <> 'webhook'`);
    await queryRunner.query('DROP INDEX webhook_deliveries_due_idx');
    if (queryRunner.connection.options.type === 'postgres') {
      for (const table of ['webhook_deliveries', 'webhook_attempts']) {
        await queryRunner.query(`DELETE FROM ${table} t WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = t.endpoint_id)`);
        await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN channel`);
        await queryRunner.query(`ALTER TABLE ${table} ADD FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE`);
      }
    } else {
      // The foreign keys are not made again on SQLite (a rebuild for a way back): the rows still name endpoints only.
      for (const table of ['webhook_deliveries', 'webhook_attempts']) await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN channel`);
    }
    await queryRunner.query("CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'");
  }
}

/**
 * SQLite: the table made again with `columns`, its rows copied (channel 'webhook'), and every index it had (other than
 * the primary key's) created again from its own SQL.
 */
async function rebuild(queryRunner: QueryRunner, table: string, columns: string, copied: string): Promise<void> {
  const indexes = (await queryRunner.query("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [table])) as {
    sql: string;
  }[];
  await queryRunner.query(`CREATE TABLE ${table}_rebuilt (${columns})`);
  await queryRunner.query(`INSERT INTO ${table}_rebuilt (${copied}, channel) SELECT ${copied}, 'webhook' FROM ${table}`);
  await queryRunner.query(`DROP TABLE ${table}`);
  await queryRunner.query(`ALTER TABLE ${table}_rebuilt RENAME TO ${table}`);
  for (const { sql } of indexes) await queryRunner.query(sql);
}
