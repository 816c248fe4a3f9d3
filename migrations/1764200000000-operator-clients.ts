import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operator clients (OAuth 2.0 client credentials): the company's own confidential clients, created by
 * `npm run clients:create`. Secrets are stored only as SHA-256; after a rotation the previous hash keeps working until
 * `previous_secret_expires_at` (docs/decisions/0021-operator-clients-and-client-credentials.md).
 */
export class OperatorClients1764200000000 implements MigrationInterface {
  name = 'OperatorClients1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = queryRunner.connection.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.query(`
      CREATE TABLE operator_clients (
        client_id varchar(64) PRIMARY KEY,
        name varchar(200) NOT NULL,
        scopes varchar(256) NOT NULL,
        secret_hash varchar(64) NOT NULL,
        previous_secret_hash varchar(64),
        previous_secret_expires_at ${timestamp},
        created_at ${timestamp} NOT NULL,
        rotated_at ${timestamp},
        revoked_at ${timestamp}
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE operator_clients');
  }
}
