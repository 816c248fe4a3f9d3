import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Lead delivery by webhook (docs/decisions/0027-webhooks-outbox.md): endpoints, the outbox of messages written with
 * their leads, one delivery series per (message, endpoint), and the log of attempts. Times are Unix milliseconds
 * (bigint), so that the worker compares them in SQL on both databases with no driver date conversion.
 */
export class Webhooks1764400000000 implements MigrationInterface {
  name = 'Webhooks1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id varchar(36) PRIMARY KEY,
        url varchar(2048) NOT NULL,
        events varchar(1024) NOT NULL,
        description varchar(2000),
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at bigint,
        status varchar(16) NOT NULL,
        disabled_reason varchar(1000),
        failing_since bigint,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_messages (
        id varchar(40) PRIMARY KEY,
        event_type varchar(64) NOT NULL,
        payload text NOT NULL,
        lead_id varchar(36),
        endpoint_id varchar(36),
        created_at bigint NOT NULL,
        dispatched_at bigint
      )`);
    // Partial, so the fan-out finds the few undispatched messages without walking the dispatched ones.
    await queryRunner.query('CREATE INDEX webhook_messages_undispatched_idx ON webhook_messages (id) WHERE dispatched_at IS NULL');
    await queryRunner.query('CREATE INDEX webhook_messages_created_idx ON webhook_messages (created_at)');
    await queryRunner.query('CREATE INDEX webhook_messages_lead_idx ON webhook_messages (lead_id)');
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        message_id varchar(40) NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
        endpoint_id varchar(36) NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        message_created_at bigint NOT NULL,
        state varchar(16) NOT NULL,
        attempts integer NOT NULL,
        step integer NOT NULL,
        next_attempt_at bigint,
        lease_owner varchar(64),
        lease_until bigint,
        updated_at bigint NOT NULL,
        PRIMARY KEY (message_id, endpoint_id)
      )`);
    await queryRunner.query("CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'");
    await queryRunner.query('CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, message_created_at)');
    await queryRunner.query(`
      CREATE TABLE webhook_attempts (
        id varchar(36) PRIMARY KEY,
        message_id varchar(40) NOT NULL,
        endpoint_id varchar(36) NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_type varchar(64) NOT NULL,
        attempt integer NOT NULL,
        attempted_at bigint NOT NULL,
        outcome varchar(16) NOT NULL,
        status_code integer,
        error varchar(500),
        latency_ms integer,
        response_body text,
        next_attempt_at bigint
      )`);
    await queryRunner.query('CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC)');
    await queryRunner.query('CREATE INDEX webhook_attempts_message_idx ON webhook_attempts (message_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE webhook_attempts');
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhook_messages');
    await queryRunner.query('DROP TABLE webhook_endpoints');
  }
}
