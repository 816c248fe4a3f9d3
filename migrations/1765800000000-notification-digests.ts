import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The daily digests sent (issue 34; src/notifications/digest/): one row per local day and recipient, written in the
 * transaction that writes the digest's outbox message, so that a day's digest goes out once across instances and
 * restarts. `day` is YYYY-MM-DD on the TIME_ZONE clock; `created_at` epoch milliseconds.
 */
export class NotificationDigests1765800000000 implements MigrationInterface {
  name = 'NotificationDigests1765800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_digests (
        day varchar(10) NOT NULL,
        recipient_id varchar(36) NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (day, recipient_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE notification_digests');
  }
}
