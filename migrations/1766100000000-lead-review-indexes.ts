import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The review queue gets partial indexes, and the accepted leads none of their own (bench/RESULTS.md, "The lead path
 * with screening … the leads table's indexes"). `leads_screening_idx` (verdict, received_at, id) put one more entry,
 * at the left end of a descending key, into every lead's write: a 50-lead INSERT cost 18.6–22.5 µs a lead with it
 * against 16.7–16.9 without. Accepted leads, nearly all of them, are listed through `leads_received_at_id_idx` (the
 * verdict checked on the row, which the page reads anyway); held and spam leads, the few a person reviews, through
 * `leads_held_idx` and `leads_spam_idx`, which an accepted lead never writes. Queries name the verdict as a literal
 * (LeadReader.conditions), so that both databases match these partial indexes at plan time.
 */
export class LeadReviewIndexes1766100000000 implements MigrationInterface {
  name = 'LeadReviewIndexes1766100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("CREATE INDEX leads_held_idx ON leads (received_at DESC, id DESC) WHERE screening_verdict = 'held'");
    await queryRunner.query("CREATE INDEX leads_spam_idx ON leads (received_at DESC, id DESC) WHERE screening_verdict = 'spam'");
    await queryRunner.query('DROP INDEX leads_screening_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX leads_screening_idx ON leads (screening_verdict, received_at DESC, id DESC)');
    await queryRunner.query('DROP INDEX leads_spam_idx');
    await queryRunner.query('DROP INDEX leads_held_idx');
  }
}
