import { MigrationInterface, QueryRunner } from 'typeorm';

/** Leads and idempotency keys. Written per driver so PostgreSQL gets uuid/timestamptz and SQLite plain text/datetime. */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    const uuid = pg ? 'uuid' : 'varchar(36)';
    const timestamp = pg ? 'timestamptz' : 'datetime';
    await queryRunner.query(`
      CREATE TABLE leads (
        id ${uuid} PRIMARY KEY,
        nome varchar(512) NOT NULL,
        email varchar(1024) NOT NULL,
        telefone varchar(128),
        telefone_e164 varchar(16),
        empresa varchar(512),
        mensagem text,
        origem varchar(256),
        received_at ${timestamp} NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX leads_received_at_idx ON leads (received_at)');
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        scope varchar(300) NOT NULL,
        key varchar(255) NOT NULL,
        fingerprint varchar(64) NOT NULL,
        lead_id ${uuid} NOT NULL,
        state varchar(16) NOT NULL,
        response_status integer,
        response_body text,
        created_at ${timestamp} NOT NULL,
        expires_at ${timestamp} NOT NULL,
        PRIMARY KEY (scope, key)
      )`);
    await queryRunner.query('CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE idempotency_keys');
    await queryRunner.query('DROP TABLE leads');
  }
}
