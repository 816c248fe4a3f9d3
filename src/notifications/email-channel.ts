import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Step, Steps } from '../database/step-transaction.js';
import { refusesContent } from '../mail/mail-outcome.js';
import { MAILER, type Mailer, type MailResult } from '../mail/mailer.js';
import type { AttemptDetail, AttemptOutcome, Channel, ClaimedDelivery, Subscriber, Subscription } from '../outbox/channel.js';
import { MailComposers } from './mail-composers.js';
import { CONFIRMATION_EVENT, EMAIL_CHANNEL } from './notification-events.js';
import type { NotificationRecipient } from './notification-recipient.entity.js';
import { BOUNCE_AFTER, ENABLED_STATUSES, NotificationRecipientsStore } from './notification-recipients.store.js';
import { RecipientLinks } from './recipient-links.js';

/** How long one SMTP exchange may take (the lease covers it). */
const ATTEMPT_TIMEOUT_MS = 60_000;
/** E-mails in flight per recipient on one instance. */
const RECIPIENT_CONCURRENCY = 2;
/** The start of a server's reply kept in the log. */
const REPLY_CAP = 500;
/** What separates the words of a server's reply (`550 5.1.1 <bob@example.com>: unknown`). */
const SEPARATORS = /([\s<>()[\]"',;:]+)/;
const ENHANCED_CODE = /\b[245]\.\d{1,3}\.\d{1,3}\b/;

export interface EmailSubscriber extends Subscriber {
  recipient: NotificationRecipient;
}

/**
 * E-mail as an outbox channel (docs/decisions/0034-outbox-channels.md, 0036-notification-recipients.md): the
 * notification recipients are its subscribers; an attempt asks the composer of the event type (MailComposers) for the
 * words, adds the recipient, a Message-ID derived from message and recipient (a resend after a crash is the same
 * message) and the unsubscribe headers, and hands it to the Mailer. Accepted: delivered. A 4xx or no connection:
 * retried on EMAIL_RETRY_SCHEDULE. A 5xx: failed, and the third in a row makes the recipient bouncing.
 */
@Injectable()
export class EmailChannel implements Channel<EmailSubscriber> {
  readonly name = EMAIL_CHANNEL.name;
  readonly subscribers = { table: 'notification_recipients', enabled: (alias: string) => `${alias}.status IN ${ENABLED_STATUSES}` };
  readonly retrySchedule: readonly number[];
  readonly attemptTimeoutMs = ATTEMPT_TIMEOUT_MS;
  /** Never by time: an address stops on its own word (unsubscribed) or on permanent failures (bouncing). */
  readonly disableAfterMs = Number.POSITIVE_INFINITY;
  readonly disableAfterSetting = 'EMAIL_RETRY_SCHEDULE';
  readonly subscriberConcurrency = RECIPIENT_CONCURRENCY;
  private readonly fromDomain: string;
  private readonly unsubscribeMailto: string | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(MAILER) private readonly mailer: Mailer,
    private readonly store: NotificationRecipientsStore,
    private readonly composers: MailComposers,
    private readonly links: RecipientLinks,
  ) {
    this.retrySchedule = config.mail.retrySchedule;
    const from = /<([^<>]*)>\s*$/.exec(config.mail.from)?.[1] ?? config.mail.from;
    this.fromDomain = from.slice(from.lastIndexOf('@') + 1);
    this.unsubscribeMailto = config.mail.unsubscribeMailto;
  }

  subscriptions(): Steps<Subscription[]> {
    return this.store.subscriptions();
  }

  hasSubscribers(): Promise<boolean> {
    return this.store.any();
  }

  async load(ids: readonly string[]): Promise<Map<string, EmailSubscriber>> {
    const recipients = await this.store.load(ids);
    return new Map(
      recipients.map((recipient) => [
        recipient.id,
        { id: recipient.id, enabled: recipient.status === 'pending' || recipient.status === 'confirmed', failingSince: recipient.failingSince, recipient },
      ]),
    );
  }

  async attempt(delivery: ClaimedDelivery & { payload: string }, subscriber: EmailSubscriber): Promise<AttemptOutcome> {
    const { recipient } = subscriber;
    const confirmation = delivery.eventType === CONFIRMATION_EVENT;
    // Until its address confirms, a recipient gets its confirmation and nothing else.
    if (recipient.status !== 'confirmed' && !confirmation) return { kind: 'failed', ...detail('recipient_not_confirmed') };
    // Fanned out while it was immediate; it asked for the digest since (PATCH mode), so not one e-mail per lead.
    if (delivery.eventType === 'lead.received' && recipient.mode !== 'immediate') return { kind: 'failed', ...detail('recipient_not_immediate') };
    const composer = this.composers.get(delivery.eventType);
    if (!composer) return { kind: 'failed', ...detail(`no_composer: ${delivery.eventType}`) };
    const unsubscribeUrl = this.links.unsubscribeUrl(recipient.id);
    const data = (JSON.parse(delivery.payload) as { data: unknown }).data;
    const composed = await composer.compose({ messageId: delivery.messageId, eventType: delivery.eventType, data, recipient, unsubscribeUrl });
    // Nothing to send (a confirmation replaced by a newer one): done, not failed.
    if (composed === null) return { kind: 'succeeded', ...detail('nothing_to_send') };
    const headers: Record<string, string> = {
      'Auto-Submitted': 'auto-generated',
      'List-Unsubscribe': [`<${unsubscribeUrl}>`, ...(this.unsubscribeMailto ? [`<mailto:${this.unsubscribeMailto}?subject=unsubscribe>`] : [])].join(', '),
    };
    // One-click on notifications only: a confirmation is not a list the address is on yet.
    if (!confirmation) headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
    const started = performance.now();
    const result = await this.mailer.send({
      ...composed,
      to: recipient.email,
      messageId: `${delivery.messageId}.${recipient.id}@${this.fromDomain}`,
      headers,
    });
    return this.outcome(result, recipient.id, Math.round(performance.now() - started));
  }

  private async outcome(result: MailResult, recipientId: string, latencyMs: number): Promise<AttemptOutcome> {
    const reply = result.response === null ? null : scrub(result.response);
    const base = { statusCode: result.code, latencyMs, responseBody: reply };
    if (result.kind === 'accepted') return { kind: 'succeeded', error: null, ...base };
    const error = scrub(result.error);
    if (result.kind === 'transient') return { kind: 'retry', error, ...base };
    // A filter refusing a lead's words is not the address refusing mail: anyone's form could make it bouncing.
    if (refusesContent(result)) return { kind: 'failed', error, ...base };
    const failures = await this.store.permanentFailure(recipientId, Date.now());
    if (failures < BOUNCE_AFTER) return { kind: 'failed', error, ...base };
    // The reason says the code, never the reply (which may name the address).
    const code = [result.code, ENHANCED_CODE.exec(result.response ?? result.error)?.[0]].filter(Boolean).join(' ');
    return { kind: 'failed', error, ...base, disable: `${BOUNCE_AFTER} permanent failures in a row; the last: SMTP ${code || 'error'}.` };
  }

  failing(id: string, now: number): Step {
    return this.store.failing(id, now);
  }

  recovered(id: string): Step {
    return this.store.recovered(id);
  }

  disable(id: string, reason: string, now: number): Step {
    return this.store.bouncing(id, reason, now);
  }
}

function detail(error: string): AttemptDetail {
  return { statusCode: null, error, latencyMs: null, responseBody: null };
}

/** A server's words for the log: addresses out, bounded. */
export function scrub(text: string): string {
  return text
    .slice(0, REPLY_CAP * 2)
    .split(SEPARATORS)
    .map((word) => (word.includes('@') ? '[address]' : word))
    .join('')
    .slice(0, REPLY_CAP);
}
