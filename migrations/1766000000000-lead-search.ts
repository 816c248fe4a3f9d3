import { MigrationInterface, QueryRunner } from 'typeorm';

/** Leads folded per transaction: a short write lock each, whatever the table's size. */
const BATCH = 2000;

/**
 * The `q` search (docs/decisions/0037-lead-search.md): `search_folded`, the words of a lead's nome, e-mail and empresa
 * folded (NFD, marks removed, lower case), each after one space, and its index.
 *
 * - SQLite: the FTS5 table `leads_search`, contentless (it keeps the words' index, not the text), with `secure-delete`
 *   on: a row deleted with its words (the 'delete' command, given the stored search_folded) takes them out of the
 *   index's pages, where `contentless_delete` would only mark the row gone and leave its words until a merge; triggers
 *   keep it in step with the rows of `leads` (by rowid).
 * - PostgreSQL: a pg_trgm GIN index when the extension can be created (a trusted extension since PostgreSQL 13: the
 *   database's owner may create it, no superuser), else a GIN index of PostgreSQL's own text search, which answers the
 *   same word-prefix queries (LeadReader picks the query by the index it finds).
 *
 * Not one transaction: existing leads are folded in batches of BATCH rows, each committed, so an upgrade of a million
 * leads never holds one long transaction; a run stopped half-way is taken up again (every step may run twice).
 * `searchDocument()` of src/leads/lead-search.ts is copied here: a migration imports nothing from src/.
 */
export class LeadSearch1766000000000 implements MigrationInterface {
  name = 'LeadSearch1766000000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    const columns = (await queryRunner.getTable('leads'))!.columns.map((column) => column.name);
    if (!columns.includes('search_folded')) await queryRunner.query('ALTER TABLE leads ADD COLUMN search_folded text');
    if (!pg) {
      await queryRunner.query(`CREATE VIRTUAL TABLE IF NOT EXISTS leads_search USING fts5(words, content='', tokenize='unicode61 remove_diacritics 0')`);
      await queryRunner.query(`INSERT INTO leads_search (leads_search, rank) VALUES ('secure-delete', 1)`);
      await queryRunner.query(`CREATE TRIGGER IF NOT EXISTS leads_search_insert AFTER INSERT ON leads WHEN new.search_folded IS NOT NULL BEGIN
        INSERT INTO leads_search (rowid, words) VALUES (new.rowid, new.search_folded); END`);
      await queryRunner.query(`CREATE TRIGGER IF NOT EXISTS leads_search_delete AFTER DELETE ON leads WHEN old.search_folded IS NOT NULL BEGIN
        INSERT INTO leads_search (leads_search, rowid, words) VALUES ('delete', old.rowid, old.search_folded); END`);
      await queryRunner.query(`CREATE TRIGGER IF NOT EXISTS leads_search_update AFTER UPDATE OF search_folded ON leads BEGIN
        INSERT INTO leads_search (leads_search, rowid, words) SELECT 'delete', old.rowid, old.search_folded WHERE old.search_folded IS NOT NULL;
        INSERT INTO leads_search (rowid, words) SELECT new.rowid, new.search_folded WHERE new.search_folded IS NOT NULL; END`);
    }
    await backfill(queryRunner, pg);
    if (pg) await pgIndex(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    if (pg) {
      await queryRunner.query('DROP INDEX IF EXISTS leads_search_trgm_idx');
      await queryRunner.query('DROP INDEX IF EXISTS leads_search_words_idx');
    } else {
      for (const trigger of ['insert', 'delete', 'update']) await queryRunner.query(`DROP TRIGGER IF EXISTS leads_search_${trigger}`);
      await queryRunner.query('DROP TABLE IF EXISTS leads_search');
    }
    await queryRunner.query('ALTER TABLE leads DROP COLUMN search_folded');
  }
}

/** Folds the leads that have no search_folded yet, BATCH at a time in id order, each batch its own transaction. */
async function backfill(queryRunner: QueryRunner, pg: boolean): Promise<void> {
  const p = (n: number) => (pg ? `$${n}` : '?');
  let last: string | undefined;
  for (;;) {
    const rows = (await queryRunner.query(
      `SELECT id, nome, email, empresa FROM leads WHERE search_folded IS NULL${last === undefined ? '' : ` AND id > ${p(1)}`} ORDER BY id LIMIT ${BATCH}`,
      last === undefined ? [] : [last],
    )) as { id: string; nome: string; email: string; empresa: string | null }[];
    if (rows.length === 0) return;
    const ids = rows.map((row) => row.id);
    const folded = rows.map((row) => searchDocument(row.nome, row.email, row.empresa));
    await queryRunner.startTransaction();
    try {
      if (pg) {
        await queryRunner.query('UPDATE leads SET search_folded = v.folded FROM unnest($1::uuid[], $2::text[]) AS v (id, folded) WHERE leads.id = v.id', [
          ids,
          folded,
        ]);
      } else {
        for (let i = 0; i < rows.length; i++) await queryRunner.query('UPDATE leads SET search_folded = ? WHERE id = ?', [folded[i], ids[i]]);
      }
      await queryRunner.commitTransaction();
    } catch (error) {
      await queryRunner.rollbackTransaction();
      throw error;
    }
    last = ids[ids.length - 1];
  }
}

/**
 * pg_trgm's GIN index when the extension is there or can be made (in a savepoint: a refusal leaves the migration
 * going), else the built-in text search's.
 */
async function pgIndex(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.startTransaction();
  try {
    await queryRunner.query('SAVEPOINT pg_trgm');
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await queryRunner.query('RELEASE SAVEPOINT pg_trgm');
  } catch {
    await queryRunner.query('ROLLBACK TO SAVEPOINT pg_trgm');
  }
  await queryRunner.commitTransaction();
  // The extension may live in a schema off the search_path (made there before): its operator class is named in full.
  const [trgm] = (await queryRunner.query(
    `SELECT quote_ident(n.nspname) AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
  )) as { schema: string }[];
  await queryRunner.query(
    trgm
      ? `CREATE INDEX IF NOT EXISTS leads_search_trgm_idx ON leads USING gin (search_folded ${trgm.schema}.gin_trgm_ops)`
      : `CREATE INDEX IF NOT EXISTS leads_search_words_idx ON leads USING gin (to_tsvector('simple', search_folded))`,
  );
}

// A copy of src/leads/lead-search.ts as it was written with this migration.
const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const foldText = (text: string) => text.normalize('NFD').replace(MARKS, '').toLowerCase().normalize('NFD').replace(MARKS, '');
const words = (text: string) =>
  foldText(text)
    .split(SEPARATORS)
    .filter((word) => word !== '');
function searchDocument(nome: string, email: string, empresa: string | null): string {
  return ' ' + [...words(nome), ...words(email), ...(empresa === null ? [] : words(empresa))].join(' ');
}
