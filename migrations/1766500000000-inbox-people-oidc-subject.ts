import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Single sign-on (issue 38; docs/decisions/0043-inbox-single-sign-on.md): the provider account (issuer and `sub`) a
 * person of the inbox first signed in with. An address is not a key (OpenID Connect Core §5.7): a provider may give it
 * to another account later, which must not become this person.
 */
export class InboxPeopleOidcSubject1766500000000 implements MigrationInterface {
  name = 'InboxPeopleOidcSubject1766500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE inbox_people ADD COLUMN oidc_issuer varchar(2000)');
    await queryRunner.query('ALTER TABLE inbox_people ADD COLUMN oidc_subject varchar(255)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE inbox_people DROP COLUMN oidc_subject');
    await queryRunner.query('ALTER TABLE inbox_people DROP COLUMN oidc_issuer');
  }
}
