import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isCanonicalUuid, uuidv7 } from '../database/uuid-v7.js';
import { OutboxMessage } from '../outbox/outbox-message.entity.js';
import { OutboxStore } from '../outbox/outbox-store.js';
import { Outbox } from '../outbox/outbox.service.js';
import { AppError, invalidQuery, validationFailed } from '../problem/app-error.js';
import type { FieldErrorCode } from '../problem/error-catalog.js';
import { SecretBox } from '../secrets/secret-box.js';
import { checkUrl, ResolvedAddress } from './webhook-address.js';
import { WebhookChannel } from './webhook-channel.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { DEFAULT_EVENT_TYPES, newSecret, TEST_EVENT } from './webhook-events.js';
import { EndpointChanges, parseEndpointCreate, parseEndpointUpdate, parseReplay } from './webhook-request.js';
import { WebhookResolver } from './webhook-tokens.js';

/** How long the previous secret keeps signing beside the new one after a rotation. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;
const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;
const CURSOR = /^(\d{1,15})\.([0-9a-f-]{36})$/;
/** How long a host's lookup may take when an endpoint is created or changed. */
const LOOKUP_TIMEOUT_MS = 5000;

export interface WebhookEndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: WebhookEndpoint['status'];
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptView {
  message_id: string;
  event_type: string;
  attempt: number;
  attempted_at: string;
  outcome: 'succeeded' | 'failed' | 'skipped';
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  response_body: string | null;
  next_attempt_at: string | null;
}

export interface DeliveriesQuery {
  limit?: number;
  cursor?: string;
  message_id?: string;
}

/**
 * Webhook endpoints, their secrets, tests, replays and attempt log (docs/decisions/0027-webhooks-outbox.md). Messages
 * are the outbox's (src/outbox/); the endpoints are the subscribers of its webhook channel (WebhookChannel).
 */
@Injectable()
export class WebhooksService implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');
  private readonly settings: AppConfig['webhooks'];

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectRepository(WebhookEndpoint) private readonly endpoints: Repository<WebhookEndpoint>,
    private readonly outbox: Outbox,
    private readonly store: OutboxStore,
    private readonly channel: WebhookChannel,
    private readonly box: SecretBox,
    private readonly resolver: WebhookResolver,
  ) {
    this.settings = config.webhooks;
  }

  onModuleInit(): void {
    this.outbox.register(this.channel);
  }

  async create(body: Record<string, unknown>): Promise<WebhookEndpointView & { secret: string }> {
    const changes = parseEndpointCreate(body);
    const url = await this.checkedUrl(changes.url!);
    if ((await this.endpoints.count()) >= this.settings.maxEndpoints) {
      throw new AppError('webhook_limit_reached', `This service keeps at most ${this.settings.maxEndpoints} webhook endpoints; delete one first.`);
    }
    // From here on leads keep their messages, and this endpoint is dated after every lead stored without one.
    return this.outbox.subscribing((notBefore) => this.insert(changes, url, notBefore));
  }

  private async insert(changes: EndpointChanges, url: string, notBefore: number): Promise<WebhookEndpointView & { secret: string }> {
    const id = uuidv7();
    const secret = newSecret();
    const now = Math.max(Date.now(), notBefore);
    const endpoint: WebhookEndpoint = {
      id,
      url,
      events: JSON.stringify(changes.events ?? DEFAULT_EVENT_TYPES),
      description: changes.description ?? null,
      secret: this.seal(secret, id),
      previousSecret: null,
      previousSecretExpiresAt: null,
      status: 'enabled',
      disabledReason: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.endpoints.insert(endpoint);
    this.logger.log({ endpoint_id: id }, 'Webhook endpoint created');
    return { ...view(endpoint), secret };
  }

  async list(): Promise<{ data: WebhookEndpointView[] }> {
    const rows = await this.endpoints.find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return { data: rows.map(view) };
  }

  async get(id: string): Promise<WebhookEndpointView> {
    return view(await this.find(id));
  }

  async update(id: string, body: Record<string, unknown>): Promise<WebhookEndpointView> {
    const changes: EndpointChanges = parseEndpointUpdate(body);
    const endpoint = await this.find(id);
    if (changes.url !== undefined) endpoint.url = await this.checkedUrl(changes.url);
    if (changes.events !== undefined) endpoint.events = JSON.stringify(changes.events);
    if (changes.description !== undefined) endpoint.description = changes.description;
    if (changes.status === 'enabled' && endpoint.status !== 'enabled') {
      Object.assign(endpoint, { status: 'enabled', disabledReason: null, failingSince: null });
    } else if (changes.status === 'disabled' && endpoint.status !== 'disabled') {
      Object.assign(endpoint, { status: 'disabled', disabledReason: 'Disabled through the API.' });
    }
    endpoint.updatedAt = Date.now();
    const { id: _, ...columns } = endpoint;
    await this.endpoints.update({ id }, columns);
    if (changes.status) this.logger.log({ endpoint_id: id, status: endpoint.status }, 'Webhook endpoint status changed');
    this.outbox.wake();
    return view(endpoint);
  }

  /** Its deliveries and log first (OutboxStore.forgetSubscriber), then the endpoint. */
  async remove(id: string): Promise<void> {
    const endpoint = await this.find(id);
    await this.store.forgetSubscriber(this.channel, endpoint.id);
    const result = await this.endpoints.delete({ id: endpoint.id });
    if (!result.affected) throw notFound();
    this.logger.log({ endpoint_id: id }, 'Webhook endpoint deleted');
    await this.outbox.subscribersChanged();
  }

  async rotateSecret(id: string): Promise<{ id: string; secret: string; previous_secret_expires_at: string }> {
    const endpoint = await this.find(id);
    const secret = newSecret();
    const now = Date.now();
    const expires = now + ROTATION_GRACE_MS;
    await this.endpoints.update(
      { id: endpoint.id },
      { secret: this.seal(secret, endpoint.id), previousSecret: endpoint.secret, previousSecretExpiresAt: expires, updatedAt: now },
    );
    this.logger.log({ endpoint_id: endpoint.id }, 'Webhook secret rotated');
    return { id: endpoint.id, secret, previous_secret_expires_at: new Date(expires).toISOString() };
  }

  /** A `webhook.test` message for this endpoint alone, through the same outbox and worker as every event. */
  async test(id: string): Promise<{ message_id: string; event_type: string }> {
    const endpoint = await this.find(id);
    const message = this.outbox.message(TEST_EVENT, new Date(), { endpoint_id: endpoint.id }, null, endpoint.id);
    await this.endpoints.manager.getRepository(OutboxMessage).insert(message);
    this.outbox.wake();
    return { message_id: message.id, event_type: TEST_EVENT };
  }

  /**
   * The endpoint's messages created in [since, until) are sent again, with their own ids, each as a new series of
   * attempts. In keyset batches with a turn of the event loop between them: a replay of a year must not hold it.
   */
  async replay(id: string, body: Record<string, unknown>): Promise<{ replayed: number }> {
    const { since, until } = parseReplay(body);
    const endpoint = await this.find(id);
    const replayed = await this.store.replay(this.channel, endpoint.id, since.getTime(), until?.getTime(), Date.now());
    this.logger.log({ endpoint_id: endpoint.id, replayed }, 'Webhook messages replayed');
    this.outbox.wake();
    return { replayed };
  }

  /** The endpoint's attempt log, newest first, in keyset pages. */
  async deliveries(id: string, query: DeliveriesQuery): Promise<{ data: WebhookAttemptView[]; next_cursor: string | null }> {
    const endpoint = await this.find(id);
    const limit = query.limit ?? 50;
    let before: [number, string] | undefined;
    if (query.message_id !== undefined) {
      if (!MESSAGE_ID.test(query.message_id)) {
        throw invalidQuery([
          { parameter: 'message_id', code: 'invalid_format', detail: 'message_id must be a message id such as msg_0193…, as webhook-id carries it.' },
        ]);
      }
    }
    if (query.cursor !== undefined) {
      const match = CURSOR.exec(Buffer.from(query.cursor, 'base64url').toString('latin1'));
      if (!match || query.cursor.length > 80) {
        throw invalidQuery([
          { parameter: 'cursor', code: 'invalid_cursor', detail: 'Pass the next_cursor of a page of this endpoint, or start again without one.' },
        ]);
      }
      before = [Number(match[1]), match[2]];
    }
    const rows = await this.store.attempts(this.channel, endpoint.id, limit, query.message_id, before);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(attemptView),
      next_cursor: rows.length > limit && last ? Buffer.from(`${Number(last.attempted_at)}.${last.id as string}`, 'latin1').toString('base64url') : null,
    };
  }

  private async checkedUrl(raw: string): Promise<string> {
    const resolver = (host: string) =>
      new Promise<ResolvedAddress[]>((resolve, reject) => {
        const timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' })), LOOKUP_TIMEOUT_MS);
        this.resolver
          .resolve(host)
          .then(resolve, reject)
          .finally(() => clearTimeout(timer));
      });
    const verdict = await checkUrl(raw, { allowPrivate: this.settings.allowPrivate, resolver });
    if (!verdict.ok) throw validationFailed([{ pointer: '/url', code: verdict.code as FieldErrorCode, detail: verdict.detail }]);
    return verdict.url.href;
  }

  private async find(id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.endpoints.findOneBy({ id: this.canonical(id) });
    if (!endpoint) throw notFound();
    return endpoint;
  }

  /** Any other id is no endpoint's (and PostgreSQL would not be asked about a NUL). */
  private canonical(id: string): string {
    const canonical = id.toLowerCase();
    if (!isCanonicalUuid(canonical)) throw notFound();
    return canonical;
  }

  private seal(secret: string, endpointId: string): string {
    return this.box.seal(secret, `webhook_secret:${endpointId}`);
  }
}

function notFound(): AppError {
  return new AppError('webhook_not_found', 'No webhook endpoint has this id.');
}

function view(endpoint: WebhookEndpoint): WebhookEndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: JSON.parse(endpoint.events) as string[],
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: new Date(endpoint.createdAt).toISOString(),
    updated_at: new Date(endpoint.updatedAt).toISOString(),
  };
}

const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(Number(value)).toISOString());

function attemptView(row: Record<string, unknown>): WebhookAttemptView {
  return {
    message_id: row.message_id as string,
    event_type: row.event_type as string,
    attempt: Number(row.attempt),
    attempted_at: new Date(Number(row.attempted_at)).toISOString(),
    outcome: row.outcome as WebhookAttemptView['outcome'],
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: (row.error as string | null) ?? null,
    latency_ms: row.latency_ms === null ? null : Number(row.latency_ms),
    response_body: (row.response_body as string | null) ?? null,
    next_attempt_at: isoOrNull(row.next_attempt_at),
  };
}
