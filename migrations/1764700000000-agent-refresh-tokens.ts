import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agents' rotating refresh tokens, stored as SHA-256 only, one family per registration
 * (docs/decisions/0030-agent-refresh-tokens.md).
 */
export class AgentRefreshTokens1764700000000 implements MigrationInterface {
  name = 'AgentRefreshTokens1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = queryRunner.connection.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.query(`
      CREATE TABLE agent_refresh_tokens (
        token_hash varchar(64) PRIMARY KEY,
        registration_id varchar(64) NOT NULL REFERENCES agent_registrations (id) ON DELETE CASCADE,
        created_at ${timestamp} NOT NULL,
        expires_at ${timestamp} NOT NULL,
        rotated_at ${timestamp}
      )`);
    await queryRunner.query('CREATE INDEX agent_refresh_tokens_registration ON agent_refresh_tokens (registration_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE agent_refresh_tokens');
  }
}
