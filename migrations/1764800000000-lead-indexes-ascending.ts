import { MigrationInterface, QueryRunner } from 'typeorm';

/** The keyset indexes of 1764300000000-lead-read-columns, with their columns as that migration made them. */
const INDEXES = [
  ['leads_received_at_id_idx', ''],
  ['leads_email_folded_idx', 'email_folded, '],
  ['leads_origem_idx', 'origem, '],
] as const;

/**
 * On SQLite, the read indexes in ascending order. SQLite walks an index backwards for the read API's newest-first
 * order (`ORDER BY received_at DESC, id DESC`, held to it by the query-plan tests of
 * src/leads/lead-reader.service.spec.ts), but a new lead is the highest key, and in a descending index it lands at the
 * left end, where SQLite splits leaves the slow way: storing a lead cost 5–10% less CPU with these (bench/RESULTS.md,
 * "The lead path against faf0218"). PostgreSQL keeps its indexes: no gain was measured there, and rebuilding them
 * would lock the leads table for seconds per million rows, past the boot's statement timeout on a large table.
 */
export class LeadIndexesAscending1764800000000 implements MigrationInterface {
  name = 'LeadIndexesAscending1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') return;
    for (const [name, prefix] of INDEXES) {
      await queryRunner.query(`DROP INDEX ${name}`);
      await queryRunner.query(`CREATE INDEX ${name} ON leads (${prefix}received_at, id)`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') return;
    for (const [name, prefix] of INDEXES) {
      await queryRunner.query(`DROP INDEX ${name}`);
      await queryRunner.query(`CREATE INDEX ${name} ON leads (${prefix}received_at DESC, id DESC)`);
    }
  }
}
