import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { leadViewOf } from '../leads/lead-reader.service.js';
import { LeadScreeningService } from '../leads/lead-screening.service.js';
import { LeadWriter } from '../leads/lead-writer.service.js';
import { AppError, invalidQuery, validationFailed } from '../problem/app-error.js';
import type { FieldErrorCode } from '../problem/error-catalog.js';
import type { ScreeningVerdict } from '../screening/screening.js';
import { SecretBox } from '../secrets/secret-box.js';
import { checkUrl, ResolvedAddress } from './webhook-address.js';
import { WebhookDispatcher } from './webhook-dispatcher.service.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { DEFAULT_EVENT_TYPES, messageId, messagePayload, newSecret, TEST_EVENT } from './webhook-events.js';
import { WebhookMessage } from './webhook-message.entity.js';
import { EndpointChanges, parseEndpointCreate, parseEndpointUpdate, parseReplay } from './webhook-request.js';
import { WebhookStore } from './webhook-store.js';
import { WebhookResolver } from './webhook-tokens.js';

/** The message a new lead writes, by its screening verdict. */
const INTAKE_EVENTS: Record<ScreeningVerdict, string | undefined> = { accepted: 'lead.received', held: 'lead.held', spam: undefined };

/** How long the previous secret keeps signing beside the new one after a rotation. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;
const CURSOR = /^(\d{1,15})\.([0-9a-f-]{36})$/;
/** Rows a replay or a deletion handles per statement, with a turn of the event loop between statements. */
const BATCH = 1000;
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
 * Webhook endpoints and their deliveries (docs/decisions/0027-webhooks-outbox.md), and the outbox: a stored lead gets its
 * `lead.received` message in the transaction that stores it (LeadWriter.alsoWrite), unless no endpoint could ever
 * receive it (below).
 */
@Injectable()
export class WebhooksService implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('Webhooks');
  private readonly settings: AppConfig['webhooks'];
  /**
   * False only on SQLite (one instance), while this process knows that no endpoint exists: a lead is then stored without
   * its message, which no endpoint could ever get (the fan-out gives an endpoint the messages created no earlier than
   * itself). Measured: `faf0218` served 1.28× this lead path with the message, 1.18× without it (bench/RESULTS.md, "The
   * lead path against faf0218"). PostgreSQL always writes it: another instance may have just created an endpoint.
   */
  private endpointsMayExist = true;
  /** Endpoint creations begun, and those not yet finished: a count taken meanwhile may miss one. */
  private creations = 0;
  private creating = 0;
  /** The latest lead stored without its message: an endpoint created later is dated after it. */
  private leftOutUpTo = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectRepository(WebhookEndpoint) private readonly endpoints: Repository<WebhookEndpoint>,
    private readonly writer: LeadWriter,
    private readonly screening: LeadScreeningService,
    private readonly store: WebhookStore,
    private readonly box: SecretBox,
    private readonly dispatcher: WebhookDispatcher,
    private readonly resolver: WebhookResolver,
  ) {
    this.settings = config.webhooks;
  }

  onModuleInit(): void {
    this.writer.alsoWrite(WebhookMessage, (lead) => {
      // At intake an accepted lead is announced, a held one only to endpoints that ask for lead.held, spam to nobody; a
      // held or spam lead gets its lead.received when a person first releases it (onRelease below).
      const eventType = INTAKE_EVENTS[lead.screeningVerdict];
      if (eventType === undefined) return [];
      if (!this.endpointsMayExist) {
        this.leftOutUpTo = Math.max(this.leftOutUpTo, lead.receivedAt.getTime());
        return [];
      }
      const view = leadViewOf(lead);
      return [
        {
          id: messageId(uuidv7(lead.receivedAt.getTime())),
          eventType,
          payload: messagePayload(eventType, lead.receivedAt, view),
          leadId: lead.id,
          endpointId: null,
          createdAt: lead.receivedAt.getTime(),
          dispatchedAt: null,
        },
      ];
    });
    this.writer.afterCommit(() => {
      if (this.endpointsMayExist) this.dispatcher.wake();
    });
    // A held or spam lead's first release announces it, with the view it has then (its verdict by the operator).
    this.screening.onRelease(WebhookMessage, (lead, releasedAt) => {
      if (!this.endpointsMayExist) {
        this.leftOutUpTo = Math.max(this.leftOutUpTo, releasedAt.getTime());
        return [];
      }
      return [
        {
          id: messageId(uuidv7(releasedAt.getTime())),
          eventType: 'lead.received',
          payload: messagePayload('lead.received', releasedAt, lead),
          leadId: lead.id,
          endpointId: null,
          createdAt: releasedAt.getTime(),
          dispatchedAt: null,
        },
      ];
    });
    this.screening.afterRelease(() => {
      if (this.endpointsMayExist) this.dispatcher.wake();
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.countEndpoints();
  }

  /**
   * SQLite: learns whether an endpoint exists, unless a creation under way could make the answer wrong. A count that
   * fails leaves the messages on.
   */
  private async countEndpoints(): Promise<void> {
    if (this.store.postgres || this.creating > 0) return;
    const creations = this.creations;
    const exist = await this.endpoints.count().then(
      (count) => count > 0,
      () => true,
    );
    if (creations === this.creations) this.endpointsMayExist = exist;
  }

  async create(body: Record<string, unknown>): Promise<WebhookEndpointView & { secret: string }> {
    const changes = parseEndpointCreate(body);
    const url = await this.checkedUrl(changes.url!);
    if ((await this.endpoints.count()) >= this.settings.maxEndpoints) {
      throw new AppError('webhook_limit_reached', `This service keeps at most ${this.settings.maxEndpoints} webhook endpoints; delete one first.`);
    }
    // From here on leads keep their messages, and this endpoint is dated after every lead stored without one.
    this.endpointsMayExist = true;
    this.creations++;
    this.creating++;
    try {
      return await this.insert(changes, url);
    } finally {
      this.creating--;
    }
  }

  private async insert(changes: EndpointChanges, url: string): Promise<WebhookEndpointView & { secret: string }> {
    const id = uuidv7();
    const secret = newSecret();
    const now = Math.max(Date.now(), this.leftOutUpTo + 1);
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
    this.dispatcher.wake();
    return view(endpoint);
  }

  /** Its deliveries and log first, in batches with a turn between them (one cascade over a large log held the loop). */
  async remove(id: string): Promise<void> {
    const endpoint = await this.find(id);
    const p = this.store.p.bind(this.store);
    for (const [table, key] of [
      ['webhook_deliveries', 'message_id'],
      ['webhook_attempts', 'id'],
    ]) {
      for (;;) {
        const rows = await this.store.query(
          `DELETE FROM ${table} WHERE endpoint_id = ${p(1)} AND ${key} IN (SELECT ${key} FROM ${table} WHERE endpoint_id = ${p(2)} LIMIT ${BATCH}) RETURNING ${key}`,
          [endpoint.id, endpoint.id],
        );
        if (rows.length < BATCH) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const result = await this.endpoints.delete({ id: endpoint.id });
    if (!result.affected) throw notFound();
    this.logger.log({ endpoint_id: id }, 'Webhook endpoint deleted');
    await this.countEndpoints();
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
    const now = new Date();
    const message: WebhookMessage = {
      id: messageId(uuidv7(now.getTime())),
      eventType: TEST_EVENT,
      payload: messagePayload(TEST_EVENT, now, { endpoint_id: endpoint.id }),
      leadId: null,
      endpointId: endpoint.id,
      createdAt: now.getTime(),
      dispatchedAt: null,
    };
    await this.endpoints.manager.getRepository(WebhookMessage).insert(message);
    this.dispatcher.wake();
    return { message_id: message.id, event_type: TEST_EVENT };
  }

  /**
   * The endpoint's messages created in [since, until) are sent again, with their own ids, each as a new series of
   * attempts. In keyset batches with a turn of the event loop between them: a replay of a year must not hold it.
   */
  async replay(id: string, body: Record<string, unknown>): Promise<{ replayed: number }> {
    const { since, until } = parseReplay(body);
    const endpoint = await this.find(id);
    const p = this.store.p.bind(this.store);
    const now = Date.now();
    let after: [number, string] | undefined;
    let replayed = 0;
    for (;;) {
      const from = after ? `(message_created_at, message_id) > (${p(3)}, ${p(4)})` : `message_created_at >= ${p(3)}`;
      const rows = await this.store.query<{ message_id: string; message_created_at: unknown }>(
        `SELECT message_id, message_created_at FROM webhook_deliveries WHERE endpoint_id = ${p(1)} AND message_created_at < ${p(2)} AND ${from}
          ORDER BY message_created_at, message_id LIMIT ${BATCH}`,
        [endpoint.id, until?.getTime() ?? Number.MAX_SAFE_INTEGER, ...(after ?? [since.getTime()])],
      );
      if (rows.length === 0) break;
      const ids = rows.map((row) => row.message_id);
      const updated = await this.store.query(
        `UPDATE webhook_deliveries SET state = 'pending', step = 0, next_attempt_at = ${p(1)}, updated_at = ${p(2)}
          WHERE endpoint_id = ${p(3)} AND message_id IN (${this.store.list(4, ids.length)}) RETURNING message_id`,
        [now, now, endpoint.id, ...ids],
      );
      replayed += updated.length;
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1];
      after = [Number(last.message_created_at), last.message_id];
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.logger.log({ endpoint_id: endpoint.id, replayed }, 'Webhook messages replayed');
    this.dispatcher.wake();
    return { replayed };
  }

  /** The endpoint's attempt log, newest first, in keyset pages. */
  async deliveries(id: string, query: DeliveriesQuery): Promise<{ data: WebhookAttemptView[]; next_cursor: string | null }> {
    const endpoint = await this.find(id);
    const limit = query.limit ?? 50;
    const p = this.store.p.bind(this.store);
    const params: unknown[] = [endpoint.id];
    let where = `endpoint_id = ${p(1)}`;
    if (query.message_id !== undefined) {
      if (!MESSAGE_ID.test(query.message_id)) {
        throw invalidQuery([
          { parameter: 'message_id', code: 'invalid_format', detail: 'message_id must be a message id such as msg_0193…, as webhook-id carries it.' },
        ]);
      }
      params.push(query.message_id);
      where += ` AND message_id = ${p(params.length)}`;
    }
    if (query.cursor !== undefined) {
      const match = CURSOR.exec(Buffer.from(query.cursor, 'base64url').toString('latin1'));
      if (!match || query.cursor.length > 80) {
        throw invalidQuery([
          { parameter: 'cursor', code: 'invalid_cursor', detail: 'Pass the next_cursor of a page of this endpoint, or start again without one.' },
        ]);
      }
      params.push(Number(match[1]), Number(match[1]), match[2]);
      where += ` AND (attempted_at < ${p(params.length - 2)} OR (attempted_at = ${p(params.length - 1)} AND id < ${p(params.length)}))`;
    }
    const rows = await this.store.query<Record<string, unknown>>(
      `SELECT id, message_id, event_type, attempt, attempted_at, outcome, status_code, error, latency_ms, response_body, next_attempt_at
        FROM webhook_attempts WHERE ${where} ORDER BY attempted_at DESC, id DESC LIMIT ${limit + 1}`,
      params,
    );
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
    if (!CANONICAL_UUID.test(canonical)) throw notFound();
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
