import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The claim ceremony (issue 36; docs/decisions/0041-agent-claims.md): an attempt to claim a registration for an owner's
 * address (the user code as a keyed digest, the code mailed to the address through verification_codes, the address
 * sealed until it is redeemed), and on the registration when it was claimed and for which address.
 */
export class AgentClaims1766300000000 implements MigrationInterface {
  name = 'AgentClaims1766300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE agent_claims (
        id varchar(36) PRIMARY KEY,
        registration_id varchar(64) NOT NULL,
        user_code_mac varchar(64) NOT NULL,
        verification_id varchar(36) NOT NULL,
        address_sealed text,
        status varchar(16) NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        last_polled_at bigint,
        confirmed_at bigint,
        redeemed_at bigint
      )`);
    await queryRunner.query('CREATE INDEX agent_claims_registration_idx ON agent_claims (registration_id, id)');
    await queryRunner.query('ALTER TABLE agent_registrations ADD COLUMN claimed_at bigint');
    await queryRunner.query('ALTER TABLE agent_registrations ADD COLUMN verified_email varchar(320)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_registrations DROP COLUMN verified_email');
    await queryRunner.query('ALTER TABLE agent_registrations DROP COLUMN claimed_at');
    await queryRunner.query('DROP INDEX agent_claims_registration_idx');
    await queryRunner.query('DROP TABLE agent_claims');
  }
}
