import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { isUniqueViolation } from '../database/database-errors.js';
import { isCanonicalUuid, uuidv7 } from '../database/uuid-v7.js';
import { OutboxStore } from '../outbox/outbox-store.js';
import { Outbox } from '../outbox/outbox.service.js';
import { AppError, invalidQuery } from '../problem/app-error.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { CONFIRMATION_EVENT, ConfirmationData, EMAIL_CHANNEL, TEST_EVENT } from './notification-events.js';
import type { NotificationRecipient } from './notification-recipient.entity.js';
import { NotificationRecipientsStore, PendingConfirmation } from './notification-recipients.store.js';
import { parseRecipientCreate, parseRecipientPatch } from './notification-request.js';
import { CONFIRMATION_LIFETIME_MS, RecipientLinks, tokenHash } from './recipient-links.js';

/** Confirmation e-mails an address may get per day, creations and resends together, across instances. */
export const CONFIRMATIONS_PER_DAY = 3;
const DAY_MS = 24 * 3_600_000;
const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;
const ATTEMPT_CURSOR = /^(\d{1,15})\.([0-9a-f-]{36})$/;
const DEFAULT_PAGE = 50;

export interface RecipientView {
  id: string;
  email: string;
  mode: NotificationRecipient['mode'];
  language: NotificationRecipient['language'];
  include_personal_data: boolean;
  status: NotificationRecipient['status'];
  status_reason: string | null;
  permanent_failures: number;
  confirmation_expires_at: string | null;
  confirmed_at: string | null;
  unsubscribed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export interface AttemptQuery extends PageQuery {
  message_id?: string;
}

/**
 * Recipients of lead notifications by e-mail (docs/decisions/0036-notification-recipients.md): the operators' API, and
 * what the pages of the e-mails' links do (confirm, unsubscribe). Their e-mails are outbox messages of the e-mail
 * channel (EmailChannel); a confirmation is written in the transaction that writes its recipient.
 */
@Injectable()
export class NotificationRecipientsService {
  private readonly logger = new Logger('Notifications');

  constructor(
    private readonly recipients: NotificationRecipientsStore,
    private readonly outbox: Outbox,
    private readonly outboxStore: OutboxStore,
    private readonly links: RecipientLinks,
    private readonly counters: RateLimitStore,
  ) {}

  async create(body: Record<string, unknown>): Promise<RecipientView> {
    const input = parseRecipientCreate(body);
    const existing = await this.recipients.idOfAddress(input.emailFolded);
    if (existing) throw exists(existing);
    await this.chargeConfirmation(input.emailFolded);
    // From here on leads keep their messages (SQLite), and the recipient is dated after every lead stored without one.
    const recipient = await this.outbox.subscribing(async (notBefore) => {
      const now = Math.max(Date.now(), notBefore);
      const id = uuidv7(now);
      const { confirmation, data } = this.newConfirmation(id, now);
      const row: NotificationRecipient = { id, ...input, ...pending(confirmation, now), createdAt: now };
      try {
        await this.recipients.transaction(() => this.insertSteps(row, data, now));
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // Another request created the same address meanwhile.
        throw exists((await this.recipients.idOfAddress(input.emailFolded)) ?? id);
      }
      return row;
    });
    this.outbox.wake();
    this.logger.log({ recipient_id: recipient.id }, 'Notification recipient created');
    return view(recipient);
  }

  private *insertSteps(row: NotificationRecipient, data: ConfirmationData, now: number) {
    yield* this.recipients.insert(row);
    yield* this.outbox.publish(CONFIRMATION_EVENT, data, now, row.id);
  }

  async list(query: PageQuery): Promise<{ data: RecipientView[]; next_cursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE;
    let after: string | undefined;
    if (query.cursor !== undefined) {
      after = Buffer.from(query.cursor, 'base64url').toString('latin1');
      if (!isCanonicalUuid(after)) throw badCursor('Pass the next_cursor of a page of recipients, or start again without one.');
    }
    const rows = await this.recipients.page(limit + 1, after);
    const page = rows.slice(0, limit);
    return { data: page.map(view), next_cursor: rows.length > limit ? Buffer.from(page.at(-1)!.id, 'latin1').toString('base64url') : null };
  }

  async get(id: string): Promise<RecipientView> {
    return view(await this.find(id));
  }

  async update(id: string, body: Record<string, unknown>): Promise<RecipientView> {
    const changes = parseRecipientPatch(body);
    const recipient = await this.find(id);
    const now = Date.now();
    await this.recipients.update(recipient.id, changes, now);
    return view({
      ...recipient,
      mode: changes.mode ?? recipient.mode,
      language: changes.language ?? recipient.language,
      includePersonalData: changes.includePersonalData ?? recipient.includePersonalData,
      updatedAt: now,
    });
  }

  /** Its deliveries and log first (OutboxStore.forgetSubscriber), then the recipient. */
  async remove(id: string): Promise<void> {
    const recipient = await this.find(id);
    await this.outboxStore.forgetSubscriber(EMAIL_CHANNEL, recipient.id);
    if (!(await this.recipients.delete(recipient.id))) throw notFound();
    this.logger.log({ recipient_id: recipient.id }, 'Notification recipient deleted');
    await this.outbox.subscribersChanged();
  }

  /** A notification.test message for this recipient alone, through the outbox like every e-mail. */
  async test(id: string): Promise<{ message_id: string; event_type: string }> {
    const recipient = await this.find(id);
    if (recipient.status !== 'confirmed') {
      throw new AppError(
        'notification_recipient_not_confirmed',
        `This recipient is ${recipient.status}; it gets nothing but the confirmation e-mail until its address confirms.`,
      );
    }
    const messageId = await this.recipients.transaction(() => this.outbox.publish(TEST_EVENT, { recipient_id: recipient.id }, Date.now(), recipient.id));
    this.outbox.wake();
    return { message_id: messageId, event_type: TEST_EVENT };
  }

  /** A new confirmation e-mail, every earlier link dead; back to pending (the way out of unsubscribed and bouncing). */
  async resendConfirmation(id: string): Promise<RecipientView> {
    const recipient = await this.find(id);
    if (recipient.status === 'confirmed') throw confirmedAlready();
    await this.chargeConfirmation(recipient.emailFolded);
    const now = Date.now();
    const { confirmation, data } = this.newConfirmation(recipient.id, now);
    const restarted = await this.recipients.transaction(() => this.restartSteps(recipient.id, confirmation, data, now));
    if (!restarted) throw confirmedAlready();
    this.outbox.wake();
    this.logger.log({ recipient_id: recipient.id }, 'Notification confirmation sent again');
    return view({ ...recipient, ...pending(confirmation, now) });
  }

  private *restartSteps(id: string, confirmation: PendingConfirmation, data: ConfirmationData, now: number) {
    // Confirmed meanwhile (its link used): nothing to send, and the transaction writes nothing.
    if (!(yield* this.recipients.restart(id, confirmation, now))) return false;
    yield* this.outbox.publish(CONFIRMATION_EVENT, data, now, id);
    return true;
  }

  /** The recipient's attempt log, newest first, in keyset pages. */
  async deliveries(id: string, query: AttemptQuery) {
    const recipient = await this.find(id);
    const limit = query.limit ?? DEFAULT_PAGE;
    if (query.message_id !== undefined && !MESSAGE_ID.test(query.message_id)) {
      throw invalidQuery([{ parameter: 'message_id', code: 'invalid_format', detail: 'message_id must be a message id such as msg_0193….' }]);
    }
    let before: [number, string] | undefined;
    if (query.cursor !== undefined) {
      const match = ATTEMPT_CURSOR.exec(Buffer.from(query.cursor, 'base64url').toString('latin1'));
      if (!match) throw badCursor('Pass the next_cursor of a page of this log, or start again without one.');
      before = [Number(match[1]), match[2]];
    }
    const rows = await this.outboxStore.attempts(EMAIL_CHANNEL, recipient.id, limit, query.message_id, before);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(attemptView),
      next_cursor: rows.length > limit && last ? Buffer.from(`${Number(last.attempted_at)}.${last.id as string}`, 'latin1').toString('base64url') : null,
    };
  }

  // What the pages of the e-mails' links do (NotificationPagesController).

  /** Whether a confirmation token would confirm now (the page shows its button, or says the link is not valid). */
  confirmable(token: string): Promise<boolean> {
    return this.recipients.confirmable(tokenHash(token), Date.now());
  }

  /** Spends a confirmation token; false when it is unknown, expired, used or replaced. */
  async confirm(token: string): Promise<boolean> {
    const id = await this.recipients.confirm(tokenHash(token), Date.now());
    if (id === undefined) return false;
    this.logger.log({ recipient_id: id }, 'Notification recipient confirmed');
    return true;
  }

  /** Whether an unsubscribe token names a recipient that exists. */
  async unsubscribable(token: unknown): Promise<boolean> {
    const id = this.links.unsubscribeRecipient(token);
    return id !== undefined && (await this.recipients.find(id)) !== undefined;
  }

  /** One-click unsubscribe; false when the token is bad or its recipient gone. */
  async unsubscribe(token: unknown): Promise<boolean> {
    const id = this.links.unsubscribeRecipient(token);
    if (id === undefined) return false;
    const now = Date.now();
    const done = await this.recipients.unsubscribe(id, `The address unsubscribed through the link of an e-mail, ${new Date(now).toISOString()}.`, now);
    if (done) this.logger.log({ recipient_id: id }, 'Notification recipient unsubscribed');
    return done;
  }

  /** A new token: the row keeps its hash, the message its nonce (RecipientLinks). */
  private newConfirmation(recipientId: string, now: number): { confirmation: PendingConfirmation; data: ConfirmationData } {
    const nonce = randomBytes(16).toString('base64url');
    const expiresAt = now + CONFIRMATION_LIFETIME_MS;
    return {
      confirmation: { tokenHash: tokenHash(this.links.confirmationToken(recipientId, nonce)), expiresAt },
      data: { recipient_id: recipientId, nonce, expires_at: expiresAt },
    };
  }

  /**
   * Counts one confirmation e-mail to this address in the shared store (Redis with REDIS_URL, so every instance counts
   * together), keyed by an HMAC of the folded address: the fourth in a day is refused.
   */
  private async chargeConfirmation(folded: string): Promise<void> {
    const { totalHits, timeToExpire } = await this.counters.increment(`notification_confirmation:${this.links.addressKey(folded)}`, DAY_MS);
    if (totalHits <= CONFIRMATIONS_PER_DAY) return;
    const seconds = Math.max(1, Math.ceil(timeToExpire / 1000));
    const hours = Math.ceil(seconds / 3600);
    throw new AppError(
      'confirmation_rate_limited',
      `This address has had ${CONFIRMATIONS_PER_DAY} confirmation e-mails in the last day; the next may be sent in ${hours} hour${hours === 1 ? '' : 's'}.`,
      { headers: { 'Retry-After': String(seconds) } },
    );
  }

  private async find(id: string): Promise<NotificationRecipient> {
    // Any other id is no recipient's (and PostgreSQL would not be asked about a NUL).
    const canonical = id.toLowerCase();
    const recipient = isCanonicalUuid(canonical) ? await this.recipients.find(canonical) : undefined;
    if (!recipient) throw notFound();
    return recipient;
  }
}

/** A recipient's state while its address has not confirmed: a new recipient's, and one sent its confirmation again. */
function pending(confirmation: PendingConfirmation, now: number) {
  return {
    status: 'pending' as const,
    statusReason: null,
    confirmationTokenHash: confirmation.tokenHash,
    confirmationExpiresAt: confirmation.expiresAt,
    confirmedAt: null,
    unsubscribedAt: null,
    permanentFailures: 0,
    failingSince: null,
    updatedAt: now,
  };
}

function notFound(): AppError {
  return new AppError('notification_recipient_not_found', 'No notification recipient has this id.');
}

function exists(id: string): AppError {
  return new AppError('notification_recipient_exists', 'A recipient with this address exists already.', { extensions: { recipient_id: id } });
}

function confirmedAlready(): AppError {
  return new AppError('notification_recipient_confirmed', 'This recipient is confirmed already; nothing was sent.');
}

function badCursor(detail: string): AppError {
  return invalidQuery([{ parameter: 'cursor', code: 'invalid_cursor', detail }]);
}

const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(Number(value)).toISOString());

export function view(r: NotificationRecipient): RecipientView {
  return {
    id: r.id,
    email: r.email,
    mode: r.mode,
    language: r.language,
    include_personal_data: r.includePersonalData,
    status: r.status,
    status_reason: r.statusReason,
    permanent_failures: r.permanentFailures,
    confirmation_expires_at: r.status === 'pending' ? isoOrNull(r.confirmationExpiresAt) : null,
    confirmed_at: isoOrNull(r.confirmedAt),
    unsubscribed_at: r.status === 'unsubscribed' ? isoOrNull(r.unsubscribedAt) : null,
    created_at: new Date(r.createdAt).toISOString(),
    updated_at: new Date(r.updatedAt).toISOString(),
  };
}

function attemptView(row: Record<string, unknown>) {
  return {
    message_id: row.message_id as string,
    event_type: row.event_type as string,
    attempt: Number(row.attempt),
    attempted_at: new Date(Number(row.attempted_at)).toISOString(),
    outcome: row.outcome as 'succeeded' | 'failed' | 'skipped',
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: (row.error as string | null) ?? null,
    latency_ms: row.latency_ms === null ? null : Number(row.latency_ms),
    response_body: (row.response_body as string | null) ?? null,
    next_attempt_at: isoOrNull(row.next_attempt_at),
  };
}
