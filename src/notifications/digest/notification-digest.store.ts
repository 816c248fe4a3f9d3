import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../../database/step-transaction.js';

/** Recipients claimed per statement: a turn of the event loop between batches. */
export const DIGEST_BATCH = 200;

/**
 * The one home of notification_digests' SQL: a row per (day, recipient) whose digest was written. Claiming a day for
 * recipients inserts their rows ON CONFLICT DO NOTHING in the caller's step transaction, which also writes the outbox
 * messages: only the instance whose insert took a row writes that recipient's message, and a rollback drops both.
 */
@Injectable()
export class NotificationDigestStore {
  readonly transactions: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.transactions = new StepTransactions(dataSource);
  }

  /**
   * Marks `day` sent for up to DIGEST_BATCH confirmed daily-digest recipients that have no row for it yet; returns the
   * ids this transaction took (none that another instance took first).
   */
  *claim(day: string, now: number): Steps<string[]> {
    const p = this.transactions.p.bind(this.transactions);
    const rows = yield [
      `INSERT INTO notification_digests (day, recipient_id, created_at)
        SELECT ${p(1)}, r.id, ${p(2)} FROM notification_recipients r
        WHERE r.status = 'confirmed' AND r.mode = 'daily_digest'
          AND NOT EXISTS (SELECT 1 FROM notification_digests d WHERE d.day = ${p(3)} AND d.recipient_id = r.id)
        ORDER BY r.id LIMIT ${DIGEST_BATCH}
        ON CONFLICT (day, recipient_id) DO NOTHING
        RETURNING recipient_id`,
      [day, now, day],
    ];
    return rows.map((row) => String(row.recipient_id));
  }

  /** Forgets the rows of days before `day` (kept a week: only today's are ever asked about). */
  async prune(day: string): Promise<void> {
    await this.transactions.query(`DELETE FROM notification_digests WHERE day < ${this.transactions.p(1)}`, [day]);
  }
}
