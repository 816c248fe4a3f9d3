import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Observability (issue 37; docs/decisions/0042-observability.md): a message keeps the W3C `traceparent` of the request
 * that wrote it, when tracing is on, so that its deliveries (a webhook's POST, an e-mail) continue that request's trace.
 */
export class OutboxTraceContext1766400000000 implements MigrationInterface {
  name = 'OutboxTraceContext1766400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_messages ADD COLUMN trace_parent varchar(55)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_messages DROP COLUMN trace_parent');
  }
}
