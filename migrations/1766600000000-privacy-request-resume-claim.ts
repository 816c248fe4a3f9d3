import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person's verified erasure or revocation is carried out again when its first run did not finish
 * (docs/decisions/0040-self-service-privacy-requests.md): `resume_claimed_at` is when an instance last took it up (the
 * verification itself, or a later run), so that two instances never run one request at once.
 */
export class PrivacyRequestResumeClaim1766600000000 implements MigrationInterface {
  name = 'PrivacyRequestResumeClaim1766600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE data_subject_requests ADD COLUMN resume_claimed_at bigint');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE data_subject_requests DROP COLUMN resume_claimed_at');
  }
}
