import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { safeError } from '../logging/safe-error.js';
import { SecretBox } from '../secrets/secret-box.js';
import { signatureHeader } from './webhook-events.js';
import { WebhookHttpClient, WebhookResponse } from './webhook-http.js';
import { AttemptRecord, ClaimedDelivery, Outcome, skipRecord, Steps, WebhookStore } from './webhook-store.js';
import { WEBHOOK_HTTP_CLIENT } from './webhook-tokens.js';

/** A lease outlives one attempt by this much: time to record its outcome. */
const LEASE_MARGIN_MS = 15_000;
/** Retry-After is honoured up to this long. */
const RETRY_AFTER_CAP_MS = 3_600_000;
const JITTER = 0.2;
/** After a failing loop turn (the database down), the worker waits this long before the next. */
const ERROR_BACKOFF_MS = 1_000;
const PRUNE_INTERVAL_MS = 60_000;
/** The shortest time between two turns of the worker. */
const TURN_INTERVAL_MS = 10;
/** Bytes of an answer kept in the attempt log. */
export const RESPONSE_BODY_BYTES = 4096;

interface PendingRecord {
  outcome: Outcome;
  /** The endpoint's own changes (failing since, disabled), after the outcomes. */
  changes: [string, unknown[]][];
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface EndpointState {
  id: string;
  url: string;
  status: string;
  secrets: string[];
  failingSince: number | null;
}

/**
 * The delivery worker of this instance (docs/decisions/0027-webhooks-outbox.md): fans new messages out into
 * deliveries, leases due deliveries, sends them, and records each attempt. Woken at once by the instance that stores a
 * lead (wake()); otherwise it polls every WEBHOOK_POLL_INTERVAL for work stored elsewhere.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly owner = `w_${randomUUID()}`;
  private readonly settings: AppConfig['webhooks'];
  private readonly userAgent: string;
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  /** Claimed deliveries waiting for their endpoint's concurrency to allow them. */
  private readonly waiting: ClaimedDelivery[] = [];
  private readonly opened = new Map<string, string>();
  /** The endpoints of the deliveries claimed last, read once per claim rather than once per attempt. */
  private endpointCache = new Map<string, EndpointState>();
  /** The ids that read looked for: one of them missing from the cache was deleted. */
  private endpointsRead = new Set<string>();
  /** Attempt outcomes waiting to be written, one transaction per turn of the event loop for all of them. */
  private records: PendingRecord[] = [];
  private lastPrune = 0;
  private lastTurn = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: WebhookStore,
    private readonly box: SecretBox,
    @Inject(WEBHOOK_HTTP_CLIENT) private readonly http: WebhookHttpClient,
  ) {
    this.settings = config.webhooks;
    this.userAgent = `leads-service/${config.version} (webhooks)`;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.worker) return;
    // SQLite serves one instance: leases left by a process that died are its own, and need not run out first.
    if (!this.store.postgres) await this.store.releaseLeases().catch(() => undefined);
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Stops claiming, lets attempts under way finish (bounded by their timeout), and gives back unstarted leases; before
   * the database closes (TypeORM closes it at application shutdown, after every module's onModuleDestroy).
   */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
    this.waiting.length = 0;
    await Promise.allSettled([...this.inFlight]);
    await this.store.releaseLeases(this.owner).catch(() => undefined);
  }

  /** New work was committed on this instance. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * Drops claimed deliveries of these messages that have not started here (their lead was erased): the rows are gone,
   * and the payload must not leave after the erasure. An attempt already under way finishes, and is not logged.
   */
  forget(messageIds: readonly string[]): void {
    if (messageIds.length === 0 || this.waiting.length === 0) return;
    const gone = new Set(messageIds);
    for (let index = this.waiting.length - 1; index >= 0; index--) if (gone.has(this.waiting[index].messageId)) this.waiting.splice(index, 1);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        // Turns at most every TURN_INTERVAL_MS: each lead's commit and each finished attempt wakes the worker, and a turn
        // per wake-up fanned out and claimed a few rows at a time, with the queries of a whole turn each time.
        // On the monotonic clock: a wall clock set back would otherwise stop the worker for as long.
        const wait = Math.min(this.lastTurn + TURN_INTERVAL_MS - performance.now(), TURN_INTERVAL_MS);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        this.lastTurn = performance.now();
        const busy = await this.turn();
        if (!busy) await this.sleep(this.settings.pollIntervalMs);
      } catch (error) {
        this.logger.warn({ error: safeError(error) }, 'Webhook delivery turn failed; retrying');
        await this.sleep(ERROR_BACKOFF_MS);
      }
    }
  }

  /** One turn: returns whether there may be more work right away. */
  private async turn(): Promise<boolean> {
    this.woken = false;
    const now = Date.now();
    const fanned = await this.store.fanOut(now);
    await this.store.skipDisabled(now);
    if (now - this.lastPrune > PRUNE_INTERVAL_MS) {
      this.lastPrune = now;
      await this.prune(now);
    }
    const free = this.settings.concurrency - this.inFlight.size - this.waiting.length;
    if (free <= 0) {
      await this.sleep(this.settings.pollIntervalMs);
      return true;
    }
    const claimed = await this.store.claim(this.owner, now, now + this.settings.timeoutMs + LEASE_MARGIN_MS, free, this.busyEndpoints());
    if (claimed.length) {
      this.waiting.push(...claimed);
      await this.startWaiting(true);
    }
    return fanned > 0 || claimed.length === free || this.woken;
  }

  private async prune(now: number): Promise<void> {
    const pruned = await this.store.prune(now - this.settings.retentionMs);
    if (pruned.messages || pruned.attempts) this.logger.log(pruned, 'Pruned old webhook messages and attempts');
  }

  /** Endpoints whose attempts running and waiting here already fill their share (WEBHOOK_ENDPOINT_CONCURRENCY). */
  private busyEndpoints(): string[] {
    const load = new Map(this.perEndpoint);
    for (const delivery of this.waiting) load.set(delivery.endpointId, (load.get(delivery.endpointId) ?? 0) + 1);
    return [...load].filter(([, count]) => count >= this.settings.endpointConcurrency).map(([id]) => id);
  }

  /** Starts the waiting deliveries whose endpoint has room, while their lease leaves time for a whole attempt. */
  private async startWaiting(refresh: boolean): Promise<void> {
    if (refresh) {
      const ids = [...new Set(this.waiting.map((d) => d.endpointId))];
      this.endpointCache = await this.endpoints(ids);
      this.endpointsRead = new Set(ids);
    }
    const endpoints = this.endpointCache;
    for (let index = 0; index < this.waiting.length;) {
      const delivery = this.waiting[index];
      const endpoint = endpoints.get(delivery.endpointId);
      if (Date.now() + this.settings.timeoutMs + 1000 > delivery.leaseUntil) {
        // Another instance may take it once the lease runs out; this one must not send it as well.
        this.waiting.splice(index, 1);
        continue;
      }
      if (!this.endpointsRead.has(delivery.endpointId)) {
        // Claimed while this call was reading endpoints: not read here, so not known deleted. The call that claimed it
        // (turn) starts it; taken as deleted, it would be neither sent nor recorded until its lease ran out.
        index++;
        continue;
      }
      const running = this.perEndpoint.get(delivery.endpointId) ?? 0;
      if (endpoint && running >= this.settings.endpointConcurrency) {
        index++;
        continue;
      }
      this.waiting.splice(index, 1);
      this.perEndpoint.set(delivery.endpointId, running + 1);
      const attempt = this.attempt(delivery, endpoint)
        .catch((error: unknown) => this.logger.warn({ error: safeError(error), message_id: delivery.messageId }, 'Webhook attempt could not be recorded'))
        .finally(() => {
          this.inFlight.delete(attempt);
          const left = (this.perEndpoint.get(delivery.endpointId) ?? 1) - 1;
          if (left > 0) this.perEndpoint.set(delivery.endpointId, left);
          else this.perEndpoint.delete(delivery.endpointId);
          if (this.waiting.length) void this.startWaiting(false).catch(() => undefined);
          this.wake();
        });
      this.inFlight.add(attempt);
    }
  }

  private async endpoints(ids: string[]): Promise<Map<string, EndpointState>> {
    if (ids.length === 0) return new Map();
    const rows = await this.store.query<Record<string, unknown>>(
      `SELECT id, url, status, secret, previous_secret, previous_secret_expires_at, failing_since FROM webhook_endpoints WHERE id IN (${this.store.list(1, ids.length)})`,
      ids,
    );
    const now = Date.now();
    return new Map(
      rows.map((row) => {
        const id = row.id as string;
        const secrets = [this.open(row.secret as string, id)];
        if (row.previous_secret && Number(row.previous_secret_expires_at) > now) secrets.push(this.open(row.previous_secret as string, id));
        const failingSince = row.failing_since === null ? null : Number(row.failing_since);
        return [id, { id, url: row.url as string, status: row.status as string, secrets, failingSince }];
      }),
    );
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

  private async attempt(delivery: ClaimedDelivery, endpoint: EndpointState | undefined): Promise<void> {
    // Deleted meanwhile: its deliveries went with it.
    if (!endpoint || delivery.payload === undefined) return;
    const message = { event_type: delivery.eventType, payload: delivery.payload };
    const attempt = delivery.attempts + 1;
    if (endpoint.status !== 'enabled') {
      const skip = skipRecord(delivery.messageId, endpoint.id, message.event_type, delivery.attempts, Date.now());
      await this.write({ record: skip, state: 'skipped', step: delivery.step }, []);
      return;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const attemptedAt = Date.now();
    const response = await this.http.send({
      url: endpoint.url,
      body: message.payload,
      timeoutMs: this.settings.timeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(endpoint.secrets, delivery.messageId, timestamp, message.payload),
      },
    });
    await this.record(delivery, endpoint, message.event_type, attempt, attemptedAt, response);
  }

  private async record(
    delivery: ClaimedDelivery,
    endpoint: EndpointState,
    eventType: string,
    attempt: number,
    attemptedAt: number,
    response: WebhookResponse,
  ): Promise<void> {
    const now = Date.now();
    const succeeded = response.status !== null && response.status >= 200 && response.status < 300;
    const gone = response.status === 410;
    let state: 'pending' | 'delivered' | 'failed' = succeeded ? 'delivered' : 'failed';
    let step = delivery.step;
    let nextAttemptAt: number | null = null;
    if (!succeeded && !gone && step < this.settings.retrySchedule.length) {
      const delay = this.settings.retrySchedule[step] * (1 - JITTER + Math.random() * 2 * JITTER);
      // Retry-After means "slow down" on 429 and 503 only; on other failures a receiver could push its retries away.
      const slowDown = (response.status === 429 || response.status === 503) && response.retryAfterSeconds !== null;
      const wait = slowDown ? Math.min(response.retryAfterSeconds! * 1000, RETRY_AFTER_CAP_MS) : 0;
      nextAttemptAt = now + Math.round(Math.max(delay, wait));
      state = 'pending';
      step += 1;
    }
    const record: AttemptRecord = {
      messageId: delivery.messageId,
      endpointId: endpoint.id,
      eventType,
      attempt,
      attemptedAt,
      outcome: succeeded ? 'succeeded' : 'failed',
      statusCode: response.status,
      error: response.error,
      latencyMs: response.latencyMs,
      // PostgreSQL refuses NUL in text; a receiver's answer must not keep its attempt from being recorded.
      responseBody: response.body === '' ? null : response.body.replaceAll('\0', '\uFFFD'),
      nextAttemptAt,
    };
    const disableReason = gone
      ? `The endpoint answered 410 Gone (message ${delivery.messageId}).`
      : !succeeded && endpoint.failingSince !== null && now - endpoint.failingSince >= this.settings.disableAfterMs
        ? `No successful delivery since ${new Date(endpoint.failingSince).toISOString()} (WEBHOOK_DISABLE_AFTER).`
        : null;
    const p = this.store.p.bind(this.store);
    const changes: [string, unknown[]][] = [];
    if (succeeded) {
      if (endpoint.failingSince !== null) changes.push([`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${p(1)}`, [endpoint.id]]);
    } else if (endpoint.failingSince === null) {
      changes.push([`UPDATE webhook_endpoints SET failing_since = ${p(1)} WHERE id = ${p(2)} AND failing_since IS NULL`, [now, endpoint.id]]);
    }
    if (disableReason) {
      changes.push([
        `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)} AND status = 'enabled'`,
        [disableReason, now, endpoint.id],
      ]);
    }
    await this.write({ record, state, step }, changes);
    if (succeeded) endpoint.failingSince = null;
    else endpoint.failingSince ??= now;
    if (disableReason) {
      endpoint.status = 'disabled';
      this.logger.warn({ endpoint_id: endpoint.id, reason: disableReason }, 'Webhook endpoint disabled');
    }
  }

  /**
   * Writes an attempt's outcome together with the others of this turn of the event loop, in one transaction: one commit
   * per attempt capped delivery at about 250/s on PostgreSQL (bench/RESULTS.md, Webhooks). A failed transaction fails
   * them all; their leases run out and the deliveries are attempted again (at least once).
   */
  private write(outcome: Outcome, changes: [string, unknown[]][]): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.records.push({ outcome, changes, resolve, reject }) === 1) setImmediate(() => void this.flushRecords());
    });
  }

  private async flushRecords(): Promise<void> {
    const batch = this.records;
    this.records = [];
    try {
      await this.store.transaction(() => this.recordSteps(batch));
      for (const record of batch) record.resolve();
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const record of batch) record.reject(error);
        return;
      }
      // One record the database refuses must not take the others of its turn down: each alone.
      for (const record of batch) await this.store.transaction(() => this.recordSteps([record])).then(record.resolve, record.reject);
    }
  }

  private *recordSteps(batch: PendingRecord[]): Steps<void> {
    yield* this.store.recordAttempts(
      this.owner,
      batch.map((record) => record.outcome),
    );
    for (const record of batch) yield* record.changes;
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
