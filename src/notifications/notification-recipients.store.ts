import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';
import type { Subscription } from '../outbox/channel.js';
import type { NotificationRecipient, RecipientLanguage, RecipientMode } from './notification-recipient.entity.js';

/** Statuses under which a recipient gets deliveries (a pending one only its confirmation: EmailChannel.attempt). */
export const ENABLED_STATUSES = "('pending', 'confirmed')";
/** Permanent failures in a row that make a recipient bouncing. */
export const BOUNCE_AFTER = 3;

const COLUMNS = `id, email, email_folded, mode, language, include_personal_data, status, status_reason, confirmation_token_hash,
  confirmation_expires_at, confirmed_at, unsubscribed_at, permanent_failures, failing_since, created_at, updated_at`;

export interface RecipientChanges {
  mode?: RecipientMode;
  language?: RecipientLanguage;
  includePersonalData?: boolean;
}

/** A new confirmation: the SHA-256 of its token and when it expires. */
export interface PendingConfirmation {
  tokenHash: string;
  expiresAt: number;
}

/**
 * The one home of notification_recipients' SQL (src/notifications/): the API's reads and writes, the pages' confirm
 * and unsubscribe, and what the e-mail channel asks of its subscribers. Step transactions, so that a recipient and its
 * confirmation message are written together (Outbox.publish).
 */
@Injectable()
export class NotificationRecipientsStore {
  private readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new StepTransactions(dataSource);
  }

  private p(n: number): string {
    return this.sql.p(n);
  }

  /** better-sqlite3 binds no booleans. */
  private bool(value: boolean): boolean | number {
    return this.sql.postgres ? value : Number(value);
  }

  transaction<T>(steps: () => Steps<T>): Promise<T> {
    return this.sql.run(steps);
  }

  *insert(r: NotificationRecipient): Steps<void> {
    const values = [
      r.id,
      r.email,
      r.emailFolded,
      r.mode,
      r.language,
      this.bool(r.includePersonalData),
      r.status,
      r.statusReason,
      r.confirmationTokenHash,
      r.confirmationExpiresAt,
      r.confirmedAt,
      r.unsubscribedAt,
      r.permanentFailures,
      r.failingSince,
      r.createdAt,
      r.updatedAt,
    ];
    yield [`INSERT INTO notification_recipients (${COLUMNS}) VALUES (${values.map((_, i) => this.p(i + 1)).join(', ')})`, values];
  }

  async find(id: string): Promise<NotificationRecipient | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM notification_recipients WHERE id = ${this.p(1)}`, [id]);
    return row && recipientOf(row);
  }

  async idOfAddress(folded: string): Promise<string | undefined> {
    const [row] = await this.sql.query<{ id: string }>(`SELECT id FROM notification_recipients WHERE email_folded = ${this.p(1)}`, [folded]);
    return row?.id;
  }

  /** `limit` recipients after `afterId` (ids are UUIDv7: oldest first). */
  async page(limit: number, afterId?: string): Promise<NotificationRecipient[]> {
    const where = afterId === undefined ? '' : `WHERE id > ${this.p(1)}`;
    const rows = await this.sql.query(
      `SELECT ${COLUMNS} FROM notification_recipients ${where} ORDER BY id LIMIT ${Math.floor(limit)}`,
      afterId === undefined ? [] : [afterId],
    );
    return rows.map(recipientOf);
  }

  async update(id: string, changes: RecipientChanges, now: number): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => sets.push(`${column} = ${this.p(params.push(value))}`);
    if (changes.mode !== undefined) set('mode', changes.mode);
    if (changes.language !== undefined) set('language', changes.language);
    if (changes.includePersonalData !== undefined) set('include_personal_data', this.bool(changes.includePersonalData));
    set('updated_at', now);
    await this.sql.query(`UPDATE notification_recipients SET ${sets.join(', ')} WHERE id = ${this.p(params.length + 1)}`, [...params, id]);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.sql.query(`DELETE FROM notification_recipients WHERE id = ${this.p(1)} RETURNING id`, [id])).length > 0;
  }

  /** Back to pending with a new confirmation (every earlier link dead), its failures forgotten: resend-confirmation. */
  *restart(id: string, confirmation: PendingConfirmation, now: number): Steps<boolean> {
    const p = this.p.bind(this);
    const rows = yield [
      `UPDATE notification_recipients SET status = 'pending', status_reason = NULL, confirmation_token_hash = ${p(1)}, confirmation_expires_at = ${p(2)},
        confirmed_at = NULL, unsubscribed_at = NULL, permanent_failures = 0, failing_since = NULL, updated_at = ${p(3)}
        WHERE id = ${p(4)} AND status <> 'confirmed' RETURNING id`,
      [confirmation.tokenHash, confirmation.expiresAt, now, id],
    ];
    return rows.length > 0;
  }

  /** Whether this hash is a pending recipient's live confirmation token. */
  async confirmable(hash: string, now: number): Promise<boolean> {
    const rows = await this.sql.query(
      `SELECT id FROM notification_recipients WHERE confirmation_token_hash = ${this.p(1)} AND status = 'pending' AND confirmation_expires_at > ${this.p(2)}`,
      [hash, now],
    );
    return rows.length > 0;
  }

  /** Spends a live confirmation token: its recipient is confirmed. One statement, so a token confirms once. */
  async confirm(hash: string, now: number): Promise<string | undefined> {
    const p = this.p.bind(this);
    const [row] = await this.sql.query<{ id: string }>(
      `UPDATE notification_recipients SET status = 'confirmed', confirmed_at = ${p(1)}, confirmation_token_hash = NULL, confirmation_expires_at = NULL,
        status_reason = NULL, updated_at = ${p(2)}
        WHERE confirmation_token_hash = ${p(3)} AND status = 'pending' AND confirmation_expires_at > ${p(4)} RETURNING id`,
      [now, now, hash, now],
    );
    return row?.id;
  }

  /** Unsubscribed (again: the first time is kept); false when the recipient does not exist. */
  async unsubscribe(id: string, reason: string, now: number): Promise<boolean> {
    const p = this.p.bind(this);
    const rows = await this.sql.query(
      `UPDATE notification_recipients SET status = 'unsubscribed', status_reason = ${p(1)}, unsubscribed_at = COALESCE(unsubscribed_at, ${p(2)}),
        confirmation_token_hash = NULL, confirmation_expires_at = NULL, updated_at = ${p(3)} WHERE id = ${p(4)} RETURNING id`,
      [reason, now, now, id],
    );
    return rows.length > 0;
  }

  /** One more permanent failure in a row; returns the count. */
  async permanentFailure(id: string, now: number): Promise<number> {
    const [row] = await this.sql.query<{ permanent_failures: unknown }>(
      `UPDATE notification_recipients SET permanent_failures = permanent_failures + 1, updated_at = ${this.p(1)} WHERE id = ${this.p(2)} RETURNING permanent_failures`,
      [now, id],
    );
    return row ? Number(row.permanent_failures) : 0;
  }

  // What the e-mail channel asks (src/outbox/channel.ts).

  /**
   * Every recipient as the fan-out sees it: a confirmed immediate one takes lead.received; every other one only the
   * messages aimed at it (its confirmation, its test, its digest).
   */
  *subscriptions(): Steps<Subscription[]> {
    const rows = yield ['SELECT id, mode, status, created_at FROM notification_recipients', []];
    return rows.map((row) => ({
      id: row.id as string,
      events: row.status === 'confirmed' && row.mode === 'immediate' ? ['lead.received'] : [],
      enabled: row.status === 'pending' || row.status === 'confirmed',
      createdAt: Number(row.created_at),
    }));
  }

  /** The ids of confirmed daily-digest recipients after `afterId`, in id order, at most `limit` (a step of the digest's). */
  *digestRecipients(afterId: string, limit: number): Steps<string[]> {
    const rows = yield [
      `SELECT id FROM notification_recipients WHERE status = 'confirmed' AND mode = 'daily_digest' AND id > ${this.p(1)} ORDER BY id LIMIT ${Math.floor(limit)}`,
      [afterId],
    ];
    return rows.map((row) => row.id as string);
  }

  async load(ids: readonly string[]): Promise<NotificationRecipient[]> {
    const rows = await this.sql.query(`SELECT ${COLUMNS} FROM notification_recipients WHERE id IN (${this.sql.list(1, ids.length)})`, [...ids]);
    return rows.map(recipientOf);
  }

  async any(): Promise<boolean> {
    return (await this.sql.query('SELECT id FROM notification_recipients LIMIT 1')).length > 0;
  }

  failing(id: string, now: number): Step {
    return [`UPDATE notification_recipients SET failing_since = ${this.p(1)} WHERE id = ${this.p(2)} AND failing_since IS NULL`, [now, id]];
  }

  /** A success: the failing streak and the permanent failures in a row are over. */
  recovered(id: string): Step {
    return [`UPDATE notification_recipients SET failing_since = NULL, permanent_failures = 0 WHERE id = ${this.p(1)}`, [id]];
  }

  /** The outbox gives up on it: bouncing, with why. */
  bouncing(id: string, reason: string, now: number): Step {
    const p = this.p.bind(this);
    return [
      `UPDATE notification_recipients SET status = 'bouncing', status_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)} AND status IN ${ENABLED_STATUSES}`,
      [reason, now, id],
    ];
  }
}

const timeOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function recipientOf(row: Record<string, unknown>): NotificationRecipient {
  return {
    id: row.id as string,
    email: row.email as string,
    emailFolded: row.email_folded as string,
    mode: row.mode as RecipientMode,
    language: row.language as RecipientLanguage,
    includePersonalData: row.include_personal_data === true || Number(row.include_personal_data) === 1,
    status: row.status as NotificationRecipient['status'],
    statusReason: (row.status_reason as string | null) ?? null,
    confirmationTokenHash: (row.confirmation_token_hash as string | null) ?? null,
    confirmationExpiresAt: timeOrNull(row.confirmation_expires_at),
    confirmedAt: timeOrNull(row.confirmed_at),
    unsubscribedAt: timeOrNull(row.unsubscribed_at),
    permanentFailures: Number(row.permanent_failures),
    failingSince: timeOrNull(row.failing_since),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
