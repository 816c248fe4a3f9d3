import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every lead carries a screening verdict (docs/decisions/0033-screening.md). Leads stored before screening existed
 * were all delivered, so they are `accepted` by `screening` when they were received, and already announced.
 *
 * `announced_at`: when the lead's `lead.received` was written to the outbox (at intake for an accepted lead, at its
 * first release for a held or spam one); null while it never was, so a release announces a lead once however often its
 * verdict changes.
 */
export class LeadScreening1765100000000 implements MigrationInterface {
  name = 'LeadScreening1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    const timestamp = pg ? 'timestamptz(3)' : 'datetime';
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN screening_verdict varchar(16) NOT NULL DEFAULT 'accepted'`);
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN screening_reasons text NOT NULL DEFAULT '[]'`);
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN screening_decided_by varchar(255) NOT NULL DEFAULT 'screening'`);
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN screening_decided_at ${timestamp}`);
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN announced_at ${timestamp}`);
    await queryRunner.query('UPDATE leads SET screening_decided_at = received_at, announced_at = received_at');
    // SQLite adds a NOT NULL column only with a default; there it stays nullable, and the service always writes it.
    if (pg) await queryRunner.query('ALTER TABLE leads ALTER COLUMN screening_decided_at SET NOT NULL');
    // Lists select one verdict (accepted by default) in list order; held_count counts the held ones.
    await queryRunner.query('CREATE INDEX leads_screening_idx ON leads (screening_verdict, received_at DESC, id DESC)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX leads_screening_idx');
    for (const column of ['announced_at', 'screening_decided_at', 'screening_decided_by', 'screening_reasons', 'screening_verdict']) {
      await queryRunner.query(`ALTER TABLE leads DROP COLUMN ${column}`);
    }
  }
}
