import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data-subject requests and retention (docs/decisions/0029-data-subject-requests.md): the audit of each request, kept
 * without personal data (an HMAC of the address, lead ids and counts); the mark that an idempotency key's lead was
 * erased (a retry then gets 410 lead_erased instead of storing the lead again); an index to find a lead's keys; and
 * the new event types for the endpoints that receive leads, so that a receiver of personal data learns of its erasure.
 */
export class DataSubjectRequests1764600000000 implements MigrationInterface {
  name = 'DataSubjectRequests1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE data_subject_requests (
        id varchar(36) PRIMARY KEY,
        type varchar(32) NOT NULL,
        subject_hmac varchar(64) NOT NULL,
        client_id varchar(64),
        requested_at bigint NOT NULL,
        completed_at bigint NOT NULL,
        lead_ids text NOT NULL,
        counts text NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX data_subject_requests_subject_idx ON data_subject_requests (subject_hmac, requested_at)');
    await queryRunner.query('ALTER TABLE idempotency_keys ADD COLUMN erased boolean NOT NULL DEFAULT false');
    await queryRunner.query('CREATE INDEX idempotency_keys_lead_idx ON idempotency_keys (lead_id)');
    const endpoints = (await queryRunner.query('SELECT id, events FROM webhook_endpoints')) as { id: string; events: string }[];
    for (const endpoint of endpoints) {
      const events = JSON.parse(endpoint.events) as string[];
      if (!events.includes('lead.received')) continue;
      const added = [...events, ...['lead.erased', 'consent.revoked'].filter((type) => !events.includes(type))];
      const p = queryRunner.connection.options.type === 'postgres' ? ['$1', '$2'] : ['?', '?'];
      await queryRunner.query(`UPDATE webhook_endpoints SET events = ${p[0]} WHERE id = ${p[1]}`, [JSON.stringify(added), endpoint.id]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const endpoints = (await queryRunner.query('SELECT id, events FROM webhook_endpoints')) as { id: string; events: string }[];
    for (const endpoint of endpoints) {
      const events = (JSON.parse(endpoint.events) as string[]).filter((type) => type !== 'lead.erased' && type !== 'consent.revoked');
      const p = queryRunner.connection.options.type === 'postgres' ? ['$1', '$2'] : ['?', '?'];
      // An endpoint left with no event would receive nothing: it keeps lead.received.
      await queryRunner.query(`UPDATE webhook_endpoints SET events = ${p[0]} WHERE id = ${p[1]}`, [
        JSON.stringify(events.length ? events : ['lead.received']),
        endpoint.id,
      ]);
    }
    await queryRunner.query('DROP INDEX idempotency_keys_lead_idx');
    await queryRunner.query('ALTER TABLE idempotency_keys DROP COLUMN erased');
    await queryRunner.query('DROP INDEX data_subject_requests_subject_idx');
    await queryRunner.query('DROP TABLE data_subject_requests');
  }
}
