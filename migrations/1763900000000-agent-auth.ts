import { MigrationInterface, QueryRunner } from 'typeorm';

/** Agent registrations, the shared signing keys, revoked token ids, and which registration sent a lead. */
export class AgentAuth1763900000000 implements MigrationInterface {
  name = 'AgentAuth1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    const timestamp = pg ? 'timestamptz' : 'datetime';
    await queryRunner.query(`
      CREATE TABLE agent_registrations (
        id varchar(64) PRIMARY KEY,
        type varchar(32) NOT NULL,
        client_name varchar(512),
        contacts text,
        email varchar(1024),
        scopes varchar(256) NOT NULL,
        claim_token_hash varchar(64) NOT NULL,
        claim_token_expires_at ${timestamp} NOT NULL,
        created_at ${timestamp} NOT NULL,
        revoked_at ${timestamp}
      )`);
    await queryRunner.query(`
      CREATE TABLE signing_keys (
        kid varchar(64) PRIMARY KEY,
        purpose varchar(32) NOT NULL,
        alg varchar(16) NOT NULL,
        public_jwk text NOT NULL,
        private_jwk text NOT NULL,
        created_at ${timestamp} NOT NULL,
        retired_at ${timestamp}
      )`);
    await queryRunner.query('CREATE INDEX signing_keys_purpose_idx ON signing_keys (purpose, created_at)');
    await queryRunner.query(`
      CREATE TABLE revoked_tokens (
        jti varchar(64) PRIMARY KEY,
        expires_at ${timestamp} NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX revoked_tokens_expires_at_idx ON revoked_tokens (expires_at)');
    await queryRunner.query('ALTER TABLE leads ADD COLUMN registration_id varchar(64)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE leads DROP COLUMN registration_id');
    await queryRunner.query('DROP TABLE revoked_tokens');
    await queryRunner.query('DROP TABLE signing_keys');
    await queryRunner.query('DROP TABLE agent_registrations');
  }
}
