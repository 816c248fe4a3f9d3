import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { validationFailed } from '../problem/app-error.js';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from '../webhooks/webhook-events.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { auditSettings } from './settings-audit.js';
import { field, Form, webhookCreateBody } from './settings-forms.js';
import { PageState, SettingsPage } from './settings-page.js';

/** Attempts an endpoint's page shows at once; older ones are a link away (the API's keyset cursor). */
export const DELIVERIES_PAGE = 25;
const MESSAGE_ID = /^msg_([0-9a-f]{12})[0-9a-f]{20}$/;
const LIST = '/inbox/settings/webhooks';
const NOTICES = {
  test: 'webhooks.notice.test',
  replayed: 'webhooks.notice.replayed',
  enabled: 'webhooks.notice.enabled',
  disabled: 'webhooks.notice.disabled',
} as const;

/**
 * The webhook pages (scope webhooks:manage): the API's WebhooksService with its checks (URL and its addresses, the
 * endpoint limit, ids), and an audit line naming the person for each change. A new endpoint's secret and a rotated one
 * are shown once, in the answer to the POST.
 */
@Injectable()
export class SettingsWebhooks {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly page: SettingsPage,
  ) {}

  async list(req: Request, res: Response, state: PageState = {}): Promise<void> {
    const { data } = await this.webhooks.list();
    const events = state.values ? state.values.getAll('events') : DEFAULT_EVENT_TYPES;
    this.page.render(req, res, 'settings-webhooks', 'settings.webhooks', { endpoints: data, eventTypes: EVENT_TYPES, events }, state);
  }

  async create(req: Request, res: Response, person: PersonPrincipal, form: Form): Promise<void> {
    const created = await this.page.submit(
      form,
      () => this.webhooks.create(webhookCreateBody(form)),
      (state) => this.list(req, res, state),
    );
    if (!created) return;
    auditSettings(this.page.actor(req, person), 'webhook_created', { endpoint_id: created.id });
    this.page.secret(req, res, {
      heading: 'webhooks.secret.created',
      items: [{ id: 'webhook-secret', label: 'webhooks.secret.label', value: created.secret }],
      back: `${LIST}/${created.id}`,
    });
  }

  async show(req: Request, res: Response, id: string): Promise<void> {
    const endpoint = await this.webhooks.get(id);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const deliveries = await this.webhooks.deliveries(endpoint.id, { limit: DELIVERIES_PAGE, cursor });
    this.page.render(
      req,
      res,
      'settings-webhook',
      'webhooks.endpoint',
      { endpoint, deliveries: deliveries.data, next: deliveries.next_cursor },
      this.page.notice(req, NOTICES),
    );
  }

  async test(req: Request, res: Response, person: PersonPrincipal, id: string): Promise<void> {
    const sent = await this.webhooks.test(id);
    auditSettings(this.page.actor(req, person), 'webhook_tested', { endpoint_id: id.toLowerCase(), message_id: sent.message_id });
    this.page.redirect(res, `${LIST}/${id.toLowerCase()}?notice=test`);
  }

  /**
   * A delivery's message sent again: the API's replay over the millisecond its id (a UUIDv7) was made in. A message of
   * this endpoint made in the same millisecond goes again too; the notice says how many went.
   */
  async replay(req: Request, res: Response, person: PersonPrincipal, id: string, form: Form): Promise<void> {
    const match = MESSAGE_ID.exec(field(form, 'message_id') ?? '');
    if (!match) throw validationFailed([{ pointer: '/message_id', code: 'invalid_format', detail: 'message_id must be a message id such as msg_0193….' }]);
    const at = parseInt(match[1], 16);
    const { replayed } = await this.webhooks.replay(id, { since: new Date(at).toISOString(), until: new Date(at + 1).toISOString() });
    auditSettings(this.page.actor(req, person), 'webhook_replayed', { endpoint_id: id.toLowerCase(), message_id: match[0], replayed });
    this.page.redirect(res, `${LIST}/${id.toLowerCase()}?notice=replayed&count=${replayed}`);
  }

  async rotate(req: Request, res: Response, person: PersonPrincipal, id: string): Promise<void> {
    const rotated = await this.webhooks.rotateSecret(id);
    auditSettings(this.page.actor(req, person), 'webhook_secret_rotated', { endpoint_id: rotated.id });
    this.page.secret(req, res, {
      heading: 'webhooks.secret.rotated',
      items: [{ id: 'webhook-secret', label: 'webhooks.secret.label', value: rotated.secret }],
      hint: 'webhooks.secret.rotated.hint',
      hintAt: rotated.previous_secret_expires_at,
      back: `${LIST}/${rotated.id}`,
    });
  }

  async setStatus(req: Request, res: Response, person: PersonPrincipal, id: string, form: Form): Promise<void> {
    const updated = await this.webhooks.update(id, { status: field(form, 'status') ?? '' });
    auditSettings(this.page.actor(req, person), 'webhook_status_changed', { endpoint_id: updated.id, status: updated.status });
    this.page.redirect(res, `${LIST}/${updated.id}?notice=${updated.status}`);
  }
}
