import { MigrationInterface, QueryRunner } from 'typeorm';

/** The subscriber tables of the channels there are; a new channel's migration adds its table's triggers. */
const SUBSCRIBER_TABLES = ['webhook_endpoints', 'notification_recipients'];

/**
 * SQLite: a counter that every change of a subscriber table moves, by triggers, so that whatever writes a subscriber
 * (an API call, the worker disabling one, a confirmation page, another tool on the file) the lead path knows that the
 * subscriptions it holds are out of date (Outbox, "deliveries in the lead's transaction"; docs/decisions/0034). No
 * PostgreSQL counterpart: there the fan-out makes every delivery, as other instances change subscribers at any time.
 */
export class OutboxSubscriberChanges1766110000000 implements MigrationInterface {
  name = 'OutboxSubscriberChanges1766110000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') return;
    await queryRunner.query('CREATE TABLE outbox_subscriber_changes (id integer PRIMARY KEY CHECK (id = 1), n integer NOT NULL)');
    await queryRunner.query('INSERT INTO outbox_subscriber_changes (id, n) VALUES (1, 0)');
    for (const table of SUBSCRIBER_TABLES) {
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        await queryRunner.query(
          `CREATE TRIGGER ${table}_${event.toLowerCase()}_changes AFTER ${event} ON ${table} BEGIN UPDATE outbox_subscriber_changes SET n = n + 1 WHERE id = 1; END`,
        );
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') return;
    for (const table of SUBSCRIBER_TABLES) {
      for (const event of ['insert', 'update', 'delete']) await queryRunner.query(`DROP TRIGGER ${table}_${event}_changes`);
    }
    await queryRunner.query('DROP TABLE outbox_subscriber_changes');
  }
}
