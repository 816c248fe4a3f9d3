import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inbox (issue 35): its people, their sessions and the sign-in codes (src/people/, src/inbox/, src/verification/).
 * Times are epoch milliseconds. A session id, a verification's token and its code are kept only as digests (the code
 * and the address as keyed ones, so that the table names nobody and a copy of it gives no code); until its mail is sent,
 * the address and code are kept sealed with the service key (`mail_sealed`, emptied once sent or ended:
 * docs/decisions/0038-verification-codes.md). A verification row is the outbox subscriber of its one mail (`id`).
 */
export class InboxPeople1765900000000 implements MigrationInterface {
  name = 'InboxPeople1765900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE inbox_people (
        id varchar(36) PRIMARY KEY,
        email varchar(320) NOT NULL,
        email_folded varchar(320) NOT NULL,
        role varchar(16) NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      )`);
    await queryRunner.query('CREATE UNIQUE INDEX inbox_people_email_idx ON inbox_people (email_folded)');
    await queryRunner.query(`
      CREATE TABLE inbox_sessions (
        id_hash varchar(64) PRIMARY KEY,
        person_id varchar(36) NOT NULL REFERENCES inbox_people (id) ON DELETE CASCADE,
        created_at bigint NOT NULL,
        last_seen_at bigint NOT NULL,
        expires_at bigint NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX inbox_sessions_person_idx ON inbox_sessions (person_id)');
    await queryRunner.query(`
      CREATE TABLE verification_codes (
        id varchar(36) PRIMARY KEY,
        token_hash varchar(64) NOT NULL,
        purpose varchar(32) NOT NULL,
        subject varchar(36),
        address_mac varchar(64) NOT NULL,
        code_mac varchar(64) NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        mail_sealed text,
        failing_since bigint,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      )`);
    await queryRunner.query('CREATE UNIQUE INDEX verification_codes_token_idx ON verification_codes (token_hash)');
    await queryRunner.query('CREATE INDEX verification_codes_address_idx ON verification_codes (address_mac, created_at)');
    await queryRunner.query('CREATE INDEX verification_codes_created_idx ON verification_codes (created_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE verification_codes');
    await queryRunner.query('DROP TABLE inbox_sessions');
    await queryRunner.query('DROP TABLE inbox_people');
  }
}
