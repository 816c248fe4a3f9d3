import { MigrationInterface, QueryRunner } from 'typeorm';

/** Every stored idempotent answer is a 201 receipt, so its status was a constant never read. */
export class DropIdempotencyResponseStatus1764000000000 implements MigrationInterface {
  name = 'DropIdempotencyResponseStatus1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE idempotency_keys DROP COLUMN response_status');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE idempotency_keys ADD COLUMN response_status integer');
  }
}
