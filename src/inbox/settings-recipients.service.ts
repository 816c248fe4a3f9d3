import { Injectable } from '@nestjs/common';
import { NotificationRecipientsService } from '../notifications/notification-recipients.service.js';
import { Actor, auditSettings } from './settings-audit.js';
import { Form, recipientCreateBody } from './settings-forms.js';

/** Recipients a page lists at once; the next page is a link (the API's cursor). */
export const RECIPIENTS_PAGE = 50;

/**
 * The notification recipients page's data: the API's NotificationRecipientsService with its checks (the address rule,
 * one row per address, three confirmation e-mails a day), an audit line naming the person for each change.
 */
@Injectable()
export class SettingsRecipients {
  constructor(private readonly recipients: NotificationRecipientsService) {}

  list(cursor?: string) {
    return this.recipients.list({ limit: RECIPIENTS_PAGE, cursor });
  }

  async add(actor: Actor, form: Form): Promise<void> {
    const created = await this.recipients.create(recipientCreateBody(form));
    auditSettings(actor, 'recipient_added', { recipient_id: created.id });
  }

  async resend(actor: Actor, id: string): Promise<void> {
    const recipient = await this.recipients.resendConfirmation(id);
    auditSettings(actor, 'recipient_confirmation_resent', { recipient_id: recipient.id });
  }

  async remove(actor: Actor, id: string): Promise<void> {
    await this.recipients.remove(id);
    auditSettings(actor, 'recipient_removed', { recipient_id: id.toLowerCase() });
  }
}
