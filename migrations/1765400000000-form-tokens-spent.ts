import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Form tokens already spent (issue 33; src/forms/spent-form-tokens.store.ts): one row per redeemed token, by the SHA-256
 * of its nonce, so that a token is good once across every instance. `expires_at` is the token's own expiry in epoch
 * milliseconds: after it the token is refused by its signature check alone and the row is purged.
 */
export class FormTokensSpent1765400000000 implements MigrationInterface {
  name = 'FormTokensSpent1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE form_tokens_spent (nonce_hash varchar(64) PRIMARY KEY, expires_at bigint NOT NULL)');
    await queryRunner.query('CREATE INDEX form_tokens_spent_expires_at ON form_tokens_spent (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE form_tokens_spent');
  }
}
