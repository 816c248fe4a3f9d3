import { Inject, Injectable } from '@nestjs/common';
import { context, propagation } from '@opentelemetry/api';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';
import type { AttemptOutcome, Channel, ClaimedDelivery, Subscriber, Subscription } from '../outbox/channel.js';
import { SecretBox } from '../secrets/secret-box.js';
import { deliveredEvents, signatureHeader } from './webhook-events.js';
import { WebhookHttpClient } from './webhook-http.js';
import { WEBHOOK_HTTP_CLIENT } from './webhook-tokens.js';

/** Retry-After is honoured up to this long. */
const RETRY_AFTER_CAP_MS = 3_600_000;

export interface WebhookSubscriber extends Subscriber {
  url: string;
  secrets: string[];
}

/**
 * Webhooks as an outbox channel (docs/decisions/0027-webhooks-outbox.md, 0034-outbox-channels.md): the endpoints are
 * its subscribers, an attempt is a signed POST, and its answer decides the outcome: 2xx delivered, 410 failed for good
 * with the endpoint disabled, anything else retried on WEBHOOK_RETRY_SCHEDULE (no sooner than a 429's or 503's
 * Retry-After).
 */
@Injectable()
export class WebhookChannel implements Channel<WebhookSubscriber> {
  readonly name = 'webhook';
  readonly subscribers = { table: 'webhook_endpoints', enabled: (alias: string) => `${alias}.status = 'enabled'` };
  readonly retrySchedule: readonly number[];
  readonly attemptTimeoutMs: number;
  readonly disableAfterMs: number;
  readonly disableAfterSetting = 'WEBHOOK_DISABLE_AFTER';
  readonly subscriberConcurrency: number;
  private readonly userAgent: string;
  private readonly sql: StepTransactions;
  private readonly opened = new Map<string, string>();
  private readonly propagateTrace: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    private readonly box: SecretBox,
    @Inject(WEBHOOK_HTTP_CLIENT) private readonly http: WebhookHttpClient,
  ) {
    this.retrySchedule = config.webhooks.retrySchedule;
    this.attemptTimeoutMs = config.webhooks.timeoutMs;
    this.disableAfterMs = config.webhooks.disableAfterMs;
    this.subscriberConcurrency = config.webhooks.endpointConcurrency;
    this.userAgent = `leads-service/${config.version} (webhooks)`;
    this.sql = new StepTransactions(dataSource);
    this.propagateTrace = config.observability.tracing?.propagateToWebhooks ?? false;
  }

  *subscriptions(): Steps<Subscription[]> {
    const endpoints = yield ['SELECT id, events, status, created_at FROM webhook_endpoints', []];
    return endpoints.map((e) => ({
      id: e.id as string,
      events: deliveredEvents(JSON.parse(e.events as string) as string[]),
      enabled: e.status === 'enabled',
      createdAt: Number(e.created_at),
    }));
  }

  async hasSubscribers(): Promise<boolean> {
    return (await this.sql.query('SELECT id FROM webhook_endpoints LIMIT 1')).length > 0;
  }

  async load(ids: readonly string[]): Promise<Map<string, WebhookSubscriber>> {
    const rows = await this.sql.query(
      `SELECT id, url, status, secret, previous_secret, previous_secret_expires_at, failing_since FROM webhook_endpoints WHERE id IN (${this.sql.list(1, ids.length)})`,
      [...ids],
    );
    const now = Date.now();
    return new Map(
      rows.map((row) => {
        const id = row.id as string;
        const secrets = [this.open(row.secret as string, id)];
        if (row.previous_secret && Number(row.previous_secret_expires_at) > now) secrets.push(this.open(row.previous_secret as string, id));
        const failingSince = row.failing_since === null ? null : Number(row.failing_since);
        return [id, { id, url: row.url as string, enabled: row.status === 'enabled', secrets, failingSince }];
      }),
    );
  }

  async attempt(delivery: ClaimedDelivery & { payload: string }, endpoint: WebhookSubscriber): Promise<AttemptOutcome> {
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await this.http.send({
      url: endpoint.url,
      body: delivery.payload,
      timeoutMs: this.attemptTimeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(endpoint.secrets, delivery.messageId, timestamp, delivery.payload),
        ...this.traceHeaders(),
      },
    });
    const detail = { statusCode: response.status, error: response.error, latencyMs: response.latencyMs, responseBody: response.body };
    if (response.status !== null && response.status >= 200 && response.status < 300) return { kind: 'succeeded', ...detail };
    if (response.status === 410) return { kind: 'failed', disable: `The endpoint answered 410 Gone (message ${delivery.messageId}).`, ...detail };
    // Retry-After means "slow down" on 429 and 503 only; on other failures a receiver could push its retries away.
    const slowDown = (response.status === 429 || response.status === 503) && response.retryAfterSeconds !== null;
    return { kind: 'retry', afterMs: slowDown ? Math.min(response.retryAfterSeconds! * 1000, RETRY_AFTER_CAP_MS) : undefined, ...detail };
  }

  /** The active delivery span as `traceparent` (tracing on, WEBHOOK_PROPAGATE_TRACE not false); none otherwise. */
  private traceHeaders(): Record<string, string> {
    if (!this.propagateTrace) return {};
    const headers: Record<string, string> = {};
    propagation.inject(context.active(), headers);
    return headers;
  }

  failing(id: string, now: number): Step {
    return [`UPDATE webhook_endpoints SET failing_since = ${this.sql.p(1)} WHERE id = ${this.sql.p(2)} AND failing_since IS NULL`, [now, id]];
  }

  recovered(id: string): Step {
    return [`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${this.sql.p(1)}`, [id]];
  }

  disable(id: string, reason: string, now: number): Step {
    const p = this.sql.p.bind(this.sql);
    return [
      `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)} AND status = 'enabled'`,
      [reason, now, id],
    ];
  }

  /** A sealed secret opened once and kept (a handful of endpoints, each with one or two secrets). */
  private open(sealed: string, endpointId: string): string {
    let secret = this.opened.get(sealed);
    if (secret === undefined) {
      secret = this.box.open(sealed, `webhook_secret:${endpointId}`);
      if (this.opened.size > 1000) this.opened.clear();
      this.opened.set(sealed, secret);
    }
    return secret;
  }
}
