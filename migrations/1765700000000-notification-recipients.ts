import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The e-mail channel's subscribers (issue 34; src/notifications/): addresses told of new leads, one row per address
 * (by its folded form). Times are epoch milliseconds. A confirmation token is kept only as its SHA-256.
 */
export class NotificationRecipients1765700000000 implements MigrationInterface {
  name = 'NotificationRecipients1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_recipients (
        id varchar(36) PRIMARY KEY,
        email varchar(320) NOT NULL,
        email_folded varchar(320) NOT NULL,
        mode varchar(16) NOT NULL,
        language varchar(8) NOT NULL,
        include_personal_data boolean NOT NULL,
        status varchar(16) NOT NULL,
        status_reason varchar(500),
        confirmation_token_hash varchar(64),
        confirmation_expires_at bigint,
        confirmed_at bigint,
        unsubscribed_at bigint,
        permanent_failures integer NOT NULL DEFAULT 0,
        failing_since bigint,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      )`);
    await queryRunner.query('CREATE UNIQUE INDEX notification_recipients_email_idx ON notification_recipients (email_folded)');
    await queryRunner.query('CREATE UNIQUE INDEX notification_recipients_token_idx ON notification_recipients (confirmation_token_hash)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE notification_recipients');
  }
}
