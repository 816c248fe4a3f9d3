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
   * Marks `day` sent for these recipients where no row says so yet; returns the ids this transaction took (none that
   * another instance took first).
   */
  *claim(day: string, recipientIds: readonly string[], now: number): Steps<string[]> {
    if (recipientIds.length === 0) return [];
    const p = this.transactions.p.bind(this.transactions);
    const rows = yield [
      `INSERT INTO notification_digests (day, recipient_id, created_at) VALUES ${recipientIds.map((_, i) => `(${p(3 * i + 1)}, ${p(3 * i + 2)}, ${p(3 * i + 3)})`).join(', ')}
        ON CONFLICT (day, recipient_id) DO NOTHING RETURNING recipient_id`,
      recipientIds.flatMap((id) => [day, id, now]),
    ];
    return rows.map((row) => String(row.recipient_id));
  }

  /** Forgets the rows of days before `day` (kept a week: only today's are ever asked about). */
  async prune(day: string): Promise<void> {
    await this.transactions.query(`DELETE FROM notification_digests WHERE day < ${this.transactions.p(1)}`, [day]);
  }
}
