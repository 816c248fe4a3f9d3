import { Injectable } from '@nestjs/common';
import { validationFailed } from '../problem/app-error.js';
import { EVENT_TYPES, DEFAULT_EVENT_TYPES } from '../webhooks/webhook-events.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { Actor, auditSettings } from './settings-audit.js';
import { Form, field, webhookCreateBody } from './settings-forms.js';

/** Deliveries an endpoint's page shows at once; older ones are a link away (the API's keyset cursor). */
export const DELIVERIES_PAGE = 25;
const MESSAGE_ID = /^msg_([0-9a-f]{12})[0-9a-f]{20}$/;

/**
 * The webhook pages' data: the API's WebhooksService with its checks (URL, addresses, limits), an audit line naming
 * the person for each change.
 */
@Injectable()
export class SettingsWebhooks {
  readonly eventTypes = EVENT_TYPES;
  readonly defaultEvents = DEFAULT_EVENT_TYPES;

  constructor(private readonly webhooks: WebhooksService) {}

  async list() {
    return (await this.webhooks.list()).data;
  }

  /** The new endpoint with its secret, for the answer page alone. */
  async create(actor: Actor, form: Form) {
    const created = await this.webhooks.create(webhookCreateBody(form));
    auditSettings(actor, 'webhook_created', { endpoint_id: created.id });
    return created;
  }

  async endpoint(id: string, cursor?: string) {
    const endpoint = await this.webhooks.get(id);
    const deliveries = await this.webhooks.deliveries(endpoint.id, { limit: DELIVERIES_PAGE, cursor });
    return { endpoint, deliveries };
  }

  async test(actor: Actor, id: string) {
    const sent = await this.webhooks.test(id);
    auditSettings(actor, 'webhook_tested', { endpoint_id: id.toLowerCase(), message_id: sent.message_id });
  }

  /**
   * A delivery's message sent again: the API's replay over the millisecond its id (a UUIDv7) was made in. Another
   * message of this endpoint made in the same millisecond goes again too; the page says how many went.
   */
  async replay(actor: Actor, id: string, form: Form): Promise<number> {
    const match = MESSAGE_ID.exec(field(form, 'message_id') ?? '');
    if (!match) throw validationFailed([{ pointer: '/message_id', code: 'invalid_format', detail: 'message_id must be a message id such as msg_0193….' }]);
    const at = parseInt(match[1], 16);
    const { replayed } = await this.webhooks.replay(id, { since: new Date(at).toISOString(), until: new Date(at + 1).toISOString() });
    auditSettings(actor, 'webhook_replayed', { endpoint_id: id.toLowerCase(), message_id: match[0], replayed });
    return replayed;
  }

  async rotate(actor: Actor, id: string) {
    const rotated = await this.webhooks.rotateSecret(id);
    auditSettings(actor, 'webhook_secret_rotated', { endpoint_id: rotated.id });
    return rotated;
  }

  async setStatus(actor: Actor, id: string, form: Form): Promise<'enabled' | 'disabled'> {
    const updated = await this.webhooks.update(id, { status: field(form, 'status') ?? '' });
    auditSettings(actor, 'webhook_status_changed', { endpoint_id: updated.id, status: updated.status });
    return updated.status;
  }
}
