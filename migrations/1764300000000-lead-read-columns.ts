import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows whose e-mail the JS pass folds, per round trip. */
const BATCH = 500;

/**
 * What the read API needs (docs/decisions/0023-lead-read-api.md): which surface a lead came through (`channel`), the
 * operator client that sent it (`client_id`), a case-folded copy of its e-mail for the `email` filter
 * (`email_folded`), indexes in keyset order (received_at, id), alone and after each equality filter, and the table
 * `service_keys`, where the key that seals read cursors is kept for every instance.
 *
 * `email_folded` must equal what the service writes, `foldEmail()` of src/leads/lead-rules.ts (NFC, then JavaScript's
 * toLowerCase(); copied here: a migration imports nothing from src/). SQL lower() agrees with it on ASCII only (SQLite folds nothing
 * else, PostgreSQL folds per the database's locale, none under C), so SQL folds every row and JavaScript then refolds
 * the rows that hold anything outside printable ASCII, in batches.
 */
export class LeadReadColumns1764300000000 implements MigrationInterface {
  name = 'LeadReadColumns1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    // (received_at, id) is the keyset order; the old index on received_at alone is its prefix.
    await queryRunner.query('DROP INDEX leads_received_at_idx');
    if (pg) {
      // Millisecond precision, as the service writes it and as cursors carry it: a row written by hand with microseconds
      // could otherwise fall between two pages.
      await queryRunner.query('ALTER TABLE leads ALTER COLUMN received_at TYPE timestamptz(3)');
    }
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN channel varchar(8) NOT NULL DEFAULT 'api'`);
    await queryRunner.query('ALTER TABLE leads ADD COLUMN client_id varchar(128)');
    // SQLite adds a NOT NULL column only with a default; there it stays (dropping it means rebuilding the table), which
    // changes nothing: the service always writes the column, and its inserts give no column a default the entity lacks.
    await queryRunner.query(`ALTER TABLE leads ADD COLUMN email_folded varchar(1024) NOT NULL DEFAULT ''`);
    await queryRunner.query('UPDATE leads SET email_folded = lower(email)');
    const nonAscii = pg ? `email ~ '[^ -~]'` : `email GLOB '*[^ -~]*'`;
    const [after, update] = pg ? ['$1', 'UPDATE leads SET email_folded = $1 WHERE id = $2'] : ['?', 'UPDATE leads SET email_folded = ? WHERE id = ?'];
    let rows: { id: string; email: string }[] = [];
    do {
      const last = rows.at(-1)?.id;
      rows = await queryRunner.query(
        `SELECT id, email FROM leads WHERE ${nonAscii}${last === undefined ? '' : ` AND id > ${after}`} ORDER BY id LIMIT ${BATCH}`,
        last === undefined ? [] : [last],
      );
      for (const row of rows) await queryRunner.query(update, [row.email.normalize('NFC').toLowerCase(), row.id]);
    } while (rows.length === BATCH);
    if (pg) await queryRunner.query('ALTER TABLE leads ALTER COLUMN email_folded DROP DEFAULT');
    await queryRunner.query('CREATE INDEX leads_received_at_id_idx ON leads (received_at DESC, id DESC)');
    await queryRunner.query('CREATE INDEX leads_email_folded_idx ON leads (email_folded, received_at DESC, id DESC)');
    await queryRunner.query('CREATE INDEX leads_origem_idx ON leads (origem, received_at DESC, id DESC)');
    // Secrets every instance must share, made on first use by the service (LeadReader: the key that seals cursors).
    await queryRunner.query('CREATE TABLE service_keys (purpose varchar(64) PRIMARY KEY, secret varchar(256) NOT NULL)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    await queryRunner.query('DROP TABLE service_keys');
    await queryRunner.query('DROP INDEX leads_origem_idx');
    await queryRunner.query('DROP INDEX leads_email_folded_idx');
    await queryRunner.query('DROP INDEX leads_received_at_id_idx');
    await queryRunner.query('CREATE INDEX leads_received_at_idx ON leads (received_at)');
    if (pg) await queryRunner.query('ALTER TABLE leads ALTER COLUMN received_at TYPE timestamptz');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN email_folded');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN client_id');
    await queryRunner.query('ALTER TABLE leads DROP COLUMN channel');
  }
}
