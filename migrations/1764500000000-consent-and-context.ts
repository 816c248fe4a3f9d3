import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consent and attribution (docs/decisions/0028-consent-attribution-and-data-subject-rights.md): a lead's legal bases
 * with their evidence and its context, as JSON beside its fields, and each distinct consent wording once, in
 * consent_texts. The partial index lets an erasure ask whether any other lead still names a wording.
 */
export class ConsentAndContext1764500000000 implements MigrationInterface {
  name = 'ConsentAndContext1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE leads ADD COLUMN legal_bases text');
    await queryRunner.query('ALTER TABLE leads ADD COLUMN consent_text_sha256 varchar(64)');
    await queryRunner.query('ALTER TABLE leads ADD COLUMN context text');
    await queryRunner.query('CREATE INDEX leads_consent_text_idx ON leads (consent_text_sha256) WHERE consent_text_sha256 IS NOT NULL');
    await queryRunner.query('CREATE TABLE consent_texts (sha256 varchar(64) PRIMARY KEY, text text NOT NULL, created_at bigint NOT NULL)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE consent_texts');
    await queryRunner.query('DROP INDEX leads_consent_text_idx');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN context');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN consent_text_sha256');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN legal_bases');
  }
}
