import { MigrationInterface, QueryRunner } from 'typeorm';

/** Registrations read per round trip while their addresses are indexed. */
const BATCH = 500;
/**
 * How long something an identity assertion issued at a time can still be used, in seconds: the assertion (3600), an
 * access token exchanged at its last moment (900) and clock skew for each (2 × 60). Copied from TOKEN_LIFETIMES and
 * CLOCK_SKEW_SECONDS of src/oauth/key-store.service.ts (a migration imports nothing from src/), as
 * src/identity/registration-lifetime.ts computes it.
 */
const ASSERTION_AFTERLIFE_SECONDS = 3600 + 900 + 2 * 60;

/**
 * Agent registrations found by address through an index, and purged once nothing of theirs can be used
 * (docs/decisions/0032-agent-registration-addresses-and-purge.md).
 *
 * `agent_registration_addresses` holds each address a registration names (its `contacts` and its verified_email
 * assertion), case-folded as the service folds leads' `email_folded` (NFC, then JavaScript's toLowerCase(), so done
 * here in JavaScript, in batches). `expires_at` is when the last of its claim token, identity assertions (and the
 * access tokens they give) and refresh tokens expires.
 */
export class RegistrationAddresses1764960000000 implements MigrationInterface {
  name = 'RegistrationAddresses1764960000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pg = queryRunner.connection.options.type === 'postgres';
    await queryRunner.query(`
      CREATE TABLE agent_registration_addresses (
        registration_id varchar(64) NOT NULL REFERENCES agent_registrations (id) ON DELETE CASCADE,
        email_folded varchar(1024) NOT NULL,
        PRIMARY KEY (registration_id, email_folded)
      )`);
    await queryRunner.query('CREATE INDEX agent_registration_addresses_email_idx ON agent_registration_addresses (email_folded)');

    const p = (n: number) => (pg ? `$${n}` : '?');
    let rows: { id: string; contacts: string | null; email: string | null }[] = [];
    do {
      const last = rows.at(-1)?.id;
      rows = await queryRunner.query(
        `SELECT id, contacts, email FROM agent_registrations${last === undefined ? '' : ` WHERE id > ${p(1)}`} ORDER BY id LIMIT ${BATCH}`,
        last === undefined ? [] : [last],
      );
      const pairs = rows.flatMap((row) => addressesOf(row).map((address) => [row.id, address]));
      // At most 6 addresses a registration: 64 rows (128 values) per INSERT stays far below either database's limit.
      for (let start = 0; start < pairs.length; start += 64) {
        const chunk = pairs.slice(start, start + 64);
        await queryRunner.query(
          `INSERT INTO agent_registration_addresses (registration_id, email_folded) VALUES ${chunk.map((_, i) => `(${p(2 * i + 1)}, ${p(2 * i + 2)})`).join(', ')}`,
          chunk.flat(),
        );
      }
    } while (rows.length === BATCH);

    const timestamp = pg ? 'timestamptz(3)' : 'datetime';
    await queryRunner.query(`ALTER TABLE agent_registrations ADD COLUMN expires_at ${timestamp}`);
    // The latest of: the claim token's expiry; each assertion's afterlife, from the registration and from each rotation
    // (a successor refresh token is created at its rotation); each refresh token's expiry.
    const plus = (column: string) =>
      pg
        ? `${column} + interval '${ASSERTION_AFTERLIFE_SECONDS} seconds'`
        : `strftime('%Y-%m-%d %H:%M:%f', ${column}, '+${ASSERTION_AFTERLIFE_SECONDS} seconds')`;
    await queryRunner.query(`
      UPDATE agent_registrations SET expires_at = (
        SELECT max(value) FROM (
          SELECT agent_registrations.claim_token_expires_at AS value
          UNION ALL SELECT ${plus('agent_registrations.created_at')}
          UNION ALL SELECT t.expires_at FROM agent_refresh_tokens t WHERE t.registration_id = agent_registrations.id
          UNION ALL SELECT ${plus('t.created_at')} FROM agent_refresh_tokens t WHERE t.registration_id = agent_registrations.id
        ) AS expiries
      )`);
    // SQLite adds a NOT NULL column only with a default; there it stays nullable, and the service always writes it.
    if (pg) await queryRunner.query('ALTER TABLE agent_registrations ALTER COLUMN expires_at SET NOT NULL');
    await queryRunner.query('CREATE INDEX agent_registrations_expires_at_idx ON agent_registrations (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX agent_registrations_expires_at_idx');
    await queryRunner.query('ALTER TABLE agent_registrations DROP COLUMN expires_at');
    await queryRunner.query('DROP TABLE agent_registration_addresses');
  }
}

/** The distinct case-folded addresses of a registration, as src/identity/registration-addresses.ts folds them. */
function addressesOf(row: { contacts: string | null; email: string | null }): string[] {
  const contacts = row.contacts === null ? [] : (JSON.parse(row.contacts) as unknown[]);
  const all = [...contacts, row.email].filter((address): address is string => typeof address === 'string');
  return [...new Set(all.map((address) => address.trim().normalize('NFC').toLowerCase()))];
}
