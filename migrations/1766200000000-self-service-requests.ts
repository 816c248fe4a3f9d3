import { MigrationInterface, QueryRunner } from 'typeorm';

const COLUMNS = `
  id varchar(36) PRIMARY KEY,
  type varchar(32) NOT NULL,
  subject_hmac varchar(64) NOT NULL,
  client_id varchar(64),
  requested_at bigint NOT NULL,
  completed_at bigint,
  lead_ids text NOT NULL,
  counts text NOT NULL`;

const SELF_SERVICE = `
  channel varchar(16) NOT NULL DEFAULT 'operator',
  status varchar(24) NOT NULL DEFAULT 'completed',
  verified_at bigint,
  due_at bigint,
  address_masked varchar(330),
  expires_at bigint,
  verification_id varchar(36),
  address_sealed text,
  download_hash varchar(64),
  download_expires_at bigint`;

const OLD = 'id, type, subject_hmac, client_id, requested_at, completed_at, lead_ids, counts';
const DUE_MS = 15 * 24 * 3_600_000;

/**
 * A person's own requests (issue 36; docs/decisions/0040-self-service-privacy-requests.md) in the one table of
 * data-subject requests: a request now has a channel (`operator`, `self_service`), a status (`identity_unverified`,
 * `verified`, `completed`, `locked`), when its identity was verified and when it is due (15 days later, LGPD art. 19),
 * the address masked for the queue, and while it is open the address sealed with the service key. `completed_at`
 * becomes nullable (an open request has none), which SQLite can only do by copying the table; both databases copy it.
 * The operators' earlier requests were verified when made, and are complete.
 */
export class SelfServiceRequests1766200000000 implements MigrationInterface {
  name = 'SelfServiceRequests1766200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE data_subject_requests_rebuilt (${COLUMNS},${SELF_SERVICE})`);
    await queryRunner.query(
      `INSERT INTO data_subject_requests_rebuilt (${OLD}, verified_at, due_at) SELECT ${OLD}, requested_at, requested_at + ${DUE_MS} FROM data_subject_requests`,
    );
    await queryRunner.query('DROP TABLE data_subject_requests');
    await queryRunner.query('ALTER TABLE data_subject_requests_rebuilt RENAME TO data_subject_requests');
    await queryRunner.query('CREATE INDEX data_subject_requests_subject_idx ON data_subject_requests (subject_hmac, requested_at)');
    // The queue: newest first within a status.
    await queryRunner.query('CREATE INDEX data_subject_requests_queue_idx ON data_subject_requests (status, id)');
    // The housekeeping where requests are made: the few rows that still hold an address, and the unverified ones.
    await queryRunner.query('CREATE INDEX data_subject_requests_sealed_idx ON data_subject_requests (requested_at) WHERE address_sealed IS NOT NULL');
    await queryRunner.query(
      "CREATE INDEX data_subject_requests_unverified_idx ON data_subject_requests (requested_at) WHERE status IN ('identity_unverified', 'locked')",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE data_subject_requests_rebuilt (${COLUMNS.replace('completed_at bigint', 'completed_at bigint NOT NULL')})`);
    // Requests never completed had nothing done: the older schema has no place for them.
    await queryRunner.query(`INSERT INTO data_subject_requests_rebuilt (${OLD}) SELECT ${OLD} FROM data_subject_requests WHERE completed_at IS NOT NULL`);
    await queryRunner.query('DROP TABLE data_subject_requests');
    await queryRunner.query('ALTER TABLE data_subject_requests_rebuilt RENAME TO data_subject_requests');
    await queryRunner.query('CREATE INDEX data_subject_requests_subject_idx ON data_subject_requests (subject_hmac, requested_at)');
  }
}
