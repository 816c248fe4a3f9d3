import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { NotificationRecipientsService } from '../notifications/notification-recipients.service.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { auditSettings } from './settings-audit.js';
import { Form, recipientCreateBody } from './settings-forms.js';
import { PageState, SettingsPage } from './settings-page.js';

/** Recipients a page lists at once; the next page is a link (the API's cursor). */
export const RECIPIENTS_PAGE = 50;
const LIST = '/inbox/settings/recipients';
const NOTICES = { added: 'recipients.notice.added', resent: 'recipients.notice.resent', removed: 'recipients.notice.removed' } as const;

/**
 * The notification recipients page (scope notifications:manage): the API's NotificationRecipientsService with its checks
 * (the address rule, one row per address, three confirmation e-mails an address a day), and an audit line naming the
 * person for each change.
 */
@Injectable()
export class SettingsRecipients {
  constructor(
    private readonly recipients: NotificationRecipientsService,
    private readonly page: SettingsPage,
  ) {}

  async list(req: Request, res: Response, state: PageState = this.page.notice(req, NOTICES)): Promise<void> {
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const { data, next_cursor } = await this.recipients.list({ limit: RECIPIENTS_PAGE, cursor });
    this.page.render(req, res, 'settings-recipients', 'settings.recipients', { recipients: data, next: next_cursor }, state);
  }

  async add(req: Request, res: Response, person: PersonPrincipal, form: Form): Promise<void> {
    const created = await this.page.submit(
      form,
      () => this.recipients.create(recipientCreateBody(form)),
      (state) => this.list(req, res, state),
    );
    if (!created) return;
    auditSettings(this.page.actor(req, person), 'recipient_added', { recipient_id: created.id });
    this.page.redirect(res, `${LIST}?notice=added`);
  }

  async resend(req: Request, res: Response, person: PersonPrincipal, id: string): Promise<void> {
    const recipient = await this.page.submit(
      new URLSearchParams(),
      () => this.recipients.resendConfirmation(id),
      (state) => this.list(req, res, { problem: state.problem }),
    );
    if (!recipient) return;
    auditSettings(this.page.actor(req, person), 'recipient_confirmation_resent', { recipient_id: recipient.id });
    this.page.redirect(res, `${LIST}?notice=resent`);
  }

  async remove(req: Request, res: Response, person: PersonPrincipal, id: string): Promise<void> {
    await this.recipients.remove(id);
    auditSettings(this.page.actor(req, person), 'recipient_removed', { recipient_id: id.toLowerCase() });
    this.page.redirect(res, `${LIST}?notice=removed`);
  }
}
