import { Logger } from '@nestjs/common';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows read per round trip. */
const BATCH = 500;

/** Whether an address holds a character NFKC replaces (compatibilityCharacter() of src/leads/lead-rules.ts). */
const hasCompatibilityCharacter = (email: string) => [...email].some((character) => character.normalize('NFKC') !== character);
/** foldEmail() of src/leads/lead-rules.ts, then and now: a migration imports nothing from src/. */
const foldedBefore = (email: string) => email.normalize('NFC').toLowerCase();
function foldedNow(email: string): string {
  const nfc = email.normalize('NFC');
  if (!hasCompatibilityCharacter(nfc)) return nfc.toLowerCase();
  const at = nfc.lastIndexOf('@');
  return nfc.slice(0, at) + nfc.slice(at).toLowerCase();
}

/**
 * Addresses with a compatibility character (issue 32, docs/decisions/0002-lead-fields-and-normalisation.md) are refused
 * from now on. Leads stored before keep their address; only `email_folded`, the case-folded copy the `email` filter
 * and data-subject requests match, becomes the address itself (domain lower-cased), so that such a lead matches only
 * its own address: lower-cased, U+03F4 ϴ was the θ of someone else's. The migration logs how many leads hold one (a
 * count, never an address), so an operator knows whether any are there to review.
 */
export class CompatibilityAddresses1764850000000 implements MigrationInterface {
  name = 'CompatibilityAddresses1764850000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const found = await refold(queryRunner, foldedNow);
    const logger = new Logger('Migrations');
    if (found === 0) logger.debug('No stored lead has an e-mail address with a compatibility character.');
    else
      logger.warn(
        `${found} stored lead${found === 1 ? ' has' : 's have'} an e-mail address with a compatibility character (a fullwidth or other ` +
          'variant form, refused in new leads since issue 32): they keep it, and each matches only its own address.',
      );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await refold(queryRunner, foldedBefore);
  }
}

/** Gives every lead whose address holds a compatibility character the `email_folded` of `fold`; returns how many hold one. */
async function refold(queryRunner: QueryRunner, fold: (email: string) => string): Promise<number> {
  const pg = queryRunner.connection.options.type === 'postgres';
  // Only an address with a character outside printable ASCII can hold one.
  const nonAscii = pg ? `email ~ '[^ -~]'` : `email GLOB '*[^ -~]*'`;
  const [after, update] = pg ? ['$1', 'UPDATE leads SET email_folded = $1 WHERE id = $2'] : ['?', 'UPDATE leads SET email_folded = ? WHERE id = ?'];
  let found = 0;
  let rows: { id: string; email: string; email_folded: string }[] = [];
  do {
    const last = rows.at(-1)?.id;
    rows = await queryRunner.query(
      `SELECT id, email, email_folded FROM leads WHERE ${nonAscii}${last === undefined ? '' : ` AND id > ${after}`} ORDER BY id LIMIT ${BATCH}`,
      last === undefined ? [] : [last],
    );
    for (const row of rows) {
      if (!hasCompatibilityCharacter(row.email)) continue;
      found++;
      const folded = fold(row.email);
      if (folded !== row.email_folded) await queryRunner.query(update, [folded, row.id]);
    }
  } while (rows.length === BATCH);
  return found;
}
