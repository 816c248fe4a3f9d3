import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The client address each agent registration came from: the agent quotas of the live registrations of one address
 * share one ceiling (docs/decisions/0013-identity-ceiling-per-address.md). Older registrations keep null and are
 * limited by their own quota only.
 */
export class RegistrationAddress1764100000000 implements MigrationInterface {
  name = 'RegistrationAddress1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_registrations ADD COLUMN registered_from text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_registrations DROP COLUMN registered_from');
  }
}
