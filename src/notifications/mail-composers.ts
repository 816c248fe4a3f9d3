import { Injectable } from '@nestjs/common';
import type { OutgoingMail } from '../mail/mailer.js';
import type { NotificationRecipient } from './notification-recipient.entity.js';

/** What a composer gets for one delivery of the e-mail channel. */
export interface ComposeInput {
  /** The outbox message's id (the same on every attempt). */
  messageId: string;
  eventType: string;
  /** The message's `data` member, parsed from its payload. */
  data: unknown;
  recipient: NotificationRecipient;
  /** The recipient's one-click unsubscribe URL (also in List-Unsubscribe), for the body's way out. */
  unsubscribeUrl: string;
}

/** The mail a composer writes; the channel adds the recipient, the Message-ID and the unsubscribe headers. */
export type ComposedMail = Omit<OutgoingMail, 'to' | 'messageId' | 'headers'>;

/**
 * Turns one outbox message of its event type into the e-mail for one recipient (src/notifications/). Null: nothing to
 * send for this recipient (the delivery is skipped, not failed).
 */
export interface MailComposer {
  readonly eventType: string;
  compose(input: ComposeInput): Promise<ComposedMail | null>;
}

/** The composers of the e-mail channel by event type: the channel's own, and those other parts add (the digest). */
@Injectable()
export class MailComposers {
  private readonly byType = new Map<string, MailComposer>();

  register(composer: MailComposer): void {
    if (this.byType.has(composer.eventType)) throw new Error(`mail: a composer for ${composer.eventType} is registered already`);
    this.byType.set(composer.eventType, composer);
  }

  get(eventType: string): MailComposer | undefined {
    return this.byType.get(eventType);
  }

  /** The event types some composer writes: what the channel's subscribers can subscribe to. */
  get eventTypes(): string[] {
    return [...this.byType.keys()];
  }
}
