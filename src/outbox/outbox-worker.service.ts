import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import type { Step, Steps } from '../database/step-transaction.js';
import { safeError } from '../logging/safe-error.js';
import { Metrics } from '../telemetry/metrics.js';
import { TRACING } from '../telemetry/telemetry.module.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { AttemptOutcome, Channel, ClaimedDelivery, Subscriber } from './channel.js';
import { AttemptRecord, Outcome, OutboxStore, skipRecord } from './outbox-store.js';

/** A lease outlives one attempt by this much: time to record its outcome. */
const LEASE_MARGIN_MS = 15_000;
const JITTER = 0.2;
/** After a failing loop turn (the database down), the worker waits this long before the next. */
const ERROR_BACKOFF_MS = 1_000;
const PRUNE_INTERVAL_MS = 60_000;
/** The shortest time between two turns of the worker. */
const TURN_INTERVAL_MS = 10;

/** How this instance's worker runs (the WEBHOOK_* settings that are not about one channel keep their names). */
export interface WorkerSettings {
  /** Whether this instance runs the worker. */
  worker: boolean;
  /** Attempts in flight on this instance. */
  concurrency: number;
  /** How often an idle worker looks for work that other instances stored. */
  pollIntervalMs: number;
  /** Delivered and expired messages, with their deliveries and attempt log, are pruned after this. */
  retentionMs: number;
}

interface PendingRecord {
  outcome: Outcome;
  /** The subscriber's own changes (failing since, disabled), after the outcomes. */
  changes: Step[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The outbox's worker on this instance (docs/decisions/0027-webhooks-outbox.md, 0034-outbox-channels.md): fans new
 * messages out into deliveries of every registered channel, leases each channel's due deliveries, has the channel
 * attempt them, and records each attempt with its next step: retried on the channel's schedule, failed for good, the
 * subscriber disabled when it keeps failing. One loop for all channels; the instance's concurrency is shared among
 * them (leaseShares), so that a slow channel cannot starve another. Woken at once by the instance that commits a
 * message (wake()); otherwise it polls for work stored elsewhere.
 */
@Injectable()
export class OutboxWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Outbox');
  private readonly owner = `w_${randomUUID()}`;
  private readonly settings: WorkerSettings;
  private readonly channels = new Map<string, Channel>();
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  /** Attempts running here, each with its channel's name. */
  private readonly inFlight = new Map<Promise<void>, string>();
  private readonly perSubscriber = new Map<string, number>();
  /** Leased deliveries waiting for their subscriber's concurrency to allow them. */
  private readonly waiting: ClaimedDelivery[] = [];
  /**
   * Per channel, the subscribers of the deliveries leased last, read once per lease rather than once per attempt, and
   * the ids that read looked for: one of them missing from the cache was deleted.
   */
  private readonly subscriberCache = new Map<string, { subscribers: Map<string, Subscriber>; read: Set<string> }>();
  /** Which channel leases first when two are over their share: turns about. */
  private rotation = 0;
  /** Attempt outcomes waiting to be written, one transaction per turn of the event loop for all of them. */
  private records: PendingRecord[] = [];
  /** Each channel's subscribers that get deliveries, as last read (everySubscriberBusy). */
  private readonly enabledSubscribers = new Map<string, { ids: string[]; readAt: number }>();
  private lastPrune = 0;
  private lastTurn = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: OutboxStore,
    private readonly metrics: Metrics,
    @Optional() @Inject(TRACING) private readonly tracing: Tracing | null = null,
  ) {
    this.settings = config.webhooks;
  }

  /** Plugs a channel in, before the application starts; its name is what its rows record. */
  register(channel: Channel): void {
    const known = this.channels.get(channel.name);
    if (known && known !== channel) throw new Error(`outbox: two channels are named ${channel.name}`);
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(channel.name)) throw new Error(`outbox: a channel's name is [a-z][a-z0-9_-]{0,31}, not ${channel.name}`);
    this.channels.set(channel.name, channel);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.worker || this.channels.size === 0) return;
    // SQLite serves one instance: leases left by a process that died are its own, and need not run out first.
    if (!this.store.postgres) await this.store.releaseLeases().catch(() => undefined);
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Stops leasing, lets attempts under way finish (bounded by their timeout), and gives back unstarted leases; before
   * the database closes (TypeORM closes it at application shutdown, after every module's onModuleDestroy).
   */
  async onModuleDestroy(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
    this.waiting.length = 0;
    await Promise.allSettled([...this.inFlight.keys()]);
    await this.store.releaseLeases(this.owner).catch(() => undefined);
  }

  /** New work was committed on this instance. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * Drops leased deliveries of these messages that have not started here (their lead was erased): the rows are gone,
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
        // per wake-up fanned out and leased a few rows at a time, with the queries of a whole turn each time.
        // On the monotonic clock: a wall clock set back would otherwise stop the worker for as long.
        const wait = Math.min(this.lastTurn + TURN_INTERVAL_MS - performance.now(), TURN_INTERVAL_MS);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        this.lastTurn = performance.now();
        const busy = await this.turn();
        if (!busy) await this.sleep(this.settings.pollIntervalMs);
      } catch (error) {
        this.logger.warn({ error: safeError(error) }, 'Outbox delivery turn failed; retrying');
        await this.sleep(ERROR_BACKOFF_MS);
      }
    }
  }

  /** One turn: returns whether there may be more work right away. */
  private async turn(): Promise<boolean> {
    this.woken = false;
    const now = Date.now();
    const channels = [...this.channels.values()];
    const fanned = await this.store.fanOut(channels, now);
    for (const channel of channels) {
      const skipped = await this.store.skipDisabled(channel, now);
      if (skipped) this.metrics.outboxDeliveries.inc({ channel: channel.name, outcome: 'cancelled' }, skipped);
    }
    if (now - this.lastPrune > PRUNE_INTERVAL_MS) {
      this.lastPrune = now;
      await this.prune(now);
    }
    if (this.settings.concurrency - this.inFlight.size - this.waiting.length <= 0) {
      await this.sleep(this.settings.pollIntervalMs);
      return true;
    }
    // Channels that had fewer due deliveries than they asked for: nothing more to lease this turn.
    const drained = new Set<Channel>();
    let more = false;
    for (const borrow of [false, true]) {
      for (const [channel, want] of this.leaseShares(
        channels.filter((c) => !drained.has(c)),
        channels,
        borrow,
      )) {
        if (await this.lease(channel, now, want)) more = true;
        else drained.add(channel);
      }
    }
    this.rotation++;
    return fanned > 0 || more || this.woken;
  }

  /**
   * How many deliveries each channel may lease now. Each channel's share is an equal part of WEBHOOK_CONCURRENCY; first
   * (`borrow` false) a channel below its share takes up to it; then (`borrow` true) a channel may take the slots still
   * free, but leaves one free for each other channel below its share: however long a slow channel's attempts take, the
   * others always find a slot, and each slot it frees goes first to a channel below its share.
   */
  private leaseShares(candidates: Channel[], channels: Channel[], borrow: boolean): [Channel, number][] {
    const share = Math.max(1, Math.floor(this.settings.concurrency / channels.length));
    const used = this.usedByChannel();
    let free = this.settings.concurrency - this.inFlight.size - this.waiting.length;
    const order = candidates.map((_, i) => candidates[(i + this.rotation) % candidates.length]);
    const shares: [Channel, number][] = [];
    for (const channel of order) {
      const mine = used.get(channel.name) ?? 0;
      const others = borrow ? channels.filter((c) => c !== channel && (used.get(c.name) ?? 0) < share).length : 0;
      const want = borrow ? free - others : Math.min(free, share - mine);
      if (want <= 0) continue;
      shares.push([channel, want]);
      free -= want;
      used.set(channel.name, mine + want);
    }
    return shares;
  }

  private usedByChannel(): Map<string, number> {
    const used = new Map<string, number>();
    for (const name of this.inFlight.values()) used.set(name, (used.get(name) ?? 0) + 1);
    for (const delivery of this.waiting) used.set(delivery.channel, (used.get(delivery.channel) ?? 0) + 1);
    return used;
  }

  /** Leases up to `limit` of the channel's due deliveries and starts them; returns whether it may have more. */
  private async lease(channel: Channel, now: number, limit: number): Promise<boolean> {
    const busy = this.busySubscribers(channel);
    if (await this.everySubscriberBusy(channel, busy, now)) return false;
    const leaseUntil = now + channel.attemptTimeoutMs + LEASE_MARGIN_MS;
    const claimed = await this.store.claim(channel, this.owner, now, leaseUntil, limit, busy);
    if (claimed.length) {
      this.waiting.push(...claimed);
      await this.startWaiting(channel);
    }
    return claimed.length === limit;
  }

  /**
   * Whether every subscriber of the channel that gets deliveries is busy here, so that a lease could find nothing: with
   * busy subscribers left out, the lease walked the channel's whole due index to find no row, each turn. Measured
   * (bench/RESULTS.md, "E-mail notifications"): 4.65 ms a turn at 60,000 due deliveries of one busy recipient, against
   * 0.016 ms when it has room; intake with one recipient fell to 0.45 of intake with none. The ids are read at most once
   * per poll interval: a subscriber created on another instance waits that long at most.
   */
  private async everySubscriberBusy(channel: Channel, busy: readonly string[], now: number): Promise<boolean> {
    if (busy.length === 0) return false;
    let known = this.enabledSubscribers.get(channel.name);
    if (known === undefined || now - known.readAt >= this.settings.pollIntervalMs) {
      known = { ids: await this.store.enabledSubscribers(channel), readAt: now };
      this.enabledSubscribers.set(channel.name, known);
    }
    const taken = new Set(busy);
    return known.ids.every((id) => taken.has(id));
  }

  private async prune(now: number): Promise<void> {
    const pruned = await this.store.prune(now - this.settings.retentionMs);
    if (pruned.messages || pruned.attempts) this.logger.log(pruned, 'Pruned old outbox messages and attempts');
  }

  /**
   * Subscribers whose attempts running and waiting here already fill their share (the channel's concurrency). Subscriber
   * ids are unique across channels, so one count per id serves them all (another channel's ids never match).
   */
  private busySubscribers(channel: Channel): string[] {
    const load = new Map(this.perSubscriber);
    for (const delivery of this.waiting) load.set(delivery.subscriberId, (load.get(delivery.subscriberId) ?? 0) + 1);
    return [...load].filter(([, count]) => count >= channel.subscriberConcurrency).map(([id]) => id);
  }

  /**
   * Starts the waiting deliveries whose subscriber has room, while their lease leaves time for a whole attempt; with
   * `refresh`, after reading the subscribers of that channel's waiting deliveries.
   */
  private async startWaiting(refresh?: Channel): Promise<void> {
    if (refresh) {
      const ids = [...new Set(this.waiting.filter((d) => d.channel === refresh.name).map((d) => d.subscriberId))];
      this.subscriberCache.set(refresh.name, { subscribers: ids.length ? await refresh.load(ids) : new Map(), read: new Set(ids) });
    }
    for (let index = 0; index < this.waiting.length;) {
      const delivery = this.waiting[index];
      const channel = this.channels.get(delivery.channel)!;
      const cache = this.subscriberCache.get(channel.name);
      const subscriber = cache?.subscribers.get(delivery.subscriberId);
      if (Date.now() + channel.attemptTimeoutMs + 1000 > delivery.leaseUntil) {
        // Another instance may take it once the lease runs out; this one must not send it as well.
        this.waiting.splice(index, 1);
        continue;
      }
      if (!cache?.read.has(delivery.subscriberId)) {
        // Leased while this call was reading subscribers: not read here, so not known deleted. The call that leased it
        // (turn) starts it; taken as deleted, it would be neither sent nor recorded until its lease ran out.
        index++;
        continue;
      }
      const running = this.perSubscriber.get(delivery.subscriberId) ?? 0;
      if (subscriber && running >= channel.subscriberConcurrency) {
        index++;
        continue;
      }
      this.waiting.splice(index, 1);
      this.perSubscriber.set(delivery.subscriberId, running + 1);
      const attempt = this.attempt(channel, delivery, subscriber)
        .catch((error: unknown) =>
          this.logger.warn({ error: safeError(error), channel: channel.name, message_id: delivery.messageId }, 'Outbox attempt could not be recorded'),
        )
        .finally(() => {
          this.inFlight.delete(attempt);
          const left = (this.perSubscriber.get(delivery.subscriberId) ?? 1) - 1;
          if (left > 0) this.perSubscriber.set(delivery.subscriberId, left);
          else this.perSubscriber.delete(delivery.subscriberId);
          if (this.waiting.length) void this.startWaiting().catch(() => undefined);
          this.wake();
        });
      this.inFlight.set(attempt, channel.name);
    }
  }

  private async attempt(channel: Channel, delivery: ClaimedDelivery, subscriber: Subscriber | undefined): Promise<void> {
    // Deleted meanwhile: its deliveries went with it.
    if (!subscriber || delivery.payload === undefined) return;
    if (!subscriber.enabled) {
      const skip = skipRecord(channel.name, delivery.messageId, subscriber.id, delivery.eventType, delivery.attempts, Date.now());
      await this.write({ record: skip, state: 'skipped', step: delivery.step }, []);
      this.metrics.outboxDeliveries.inc({ channel: channel.name, outcome: 'cancelled' });
      return;
    }
    const attemptedAt = Date.now();
    const outcome = this.tracing
      ? await this.tracedAttempt(this.tracing, channel, { ...delivery, payload: delivery.payload }, subscriber)
      : await channel.attempt({ ...delivery, payload: delivery.payload }, subscriber);
    await this.record(channel, delivery, subscriber, attemptedAt, outcome);
  }

  /**
   * The attempt in its own span, a child of the request that wrote the message (its traceparent, kept with it): one trace
   * from a form's POST to the CRM's receipt. The channel sends the active context on (a webhook's `traceparent`).
   */
  private tracedAttempt(tracing: Tracing, channel: Channel, delivery: ClaimedDelivery & { payload: string }, subscriber: Subscriber): Promise<AttemptOutcome> {
    const parent = delivery.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: delivery.traceParent }) : ROOT_CONTEXT;
    const attributes = { 'outbox.channel': channel.name, 'outbox.event_type': delivery.eventType, 'outbox.attempt': delivery.attempts + 1 };
    return tracing.tracer.startActiveSpan(`outbox deliver ${channel.name}`, { kind: SpanKind.PRODUCER, attributes }, parent, async (span) => {
      try {
        const outcome = await channel.attempt(delivery, subscriber);
        span.setAttribute('outbox.outcome', outcome.kind);
        if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
        if (outcome.kind !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.kind });
        return outcome;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  /** The attempt's log row and the delivery's next state, from the channel's outcome and its retry schedule. */
  private async record(channel: Channel, delivery: ClaimedDelivery, subscriber: Subscriber, attemptedAt: number, outcome: AttemptOutcome): Promise<void> {
    const now = Date.now();
    const succeeded = outcome.kind === 'succeeded';
    let state: 'pending' | 'delivered' | 'failed' = succeeded ? 'delivered' : 'failed';
    let step = delivery.step;
    let nextAttemptAt: number | null = null;
    if (outcome.kind === 'retry' && step < channel.retrySchedule.length) {
      const delay = channel.retrySchedule[step] * (1 - JITTER + Math.random() * 2 * JITTER);
      nextAttemptAt = now + Math.round(Math.max(delay, outcome.afterMs ?? 0));
      state = 'pending';
      step += 1;
    }
    const record: AttemptRecord = {
      channel: channel.name,
      messageId: delivery.messageId,
      subscriberId: subscriber.id,
      eventType: delivery.eventType,
      attempt: delivery.attempts + 1,
      attemptedAt,
      outcome: succeeded ? 'succeeded' : 'failed',
      statusCode: outcome.statusCode,
      error: outcome.error,
      latencyMs: outcome.latencyMs,
      // PostgreSQL refuses NUL in text; a receiver's answer must not keep its attempt from being recorded.
      responseBody: outcome.responseBody === null || outcome.responseBody === '' ? null : outcome.responseBody.replaceAll('\0', '\uFFFD'),
      nextAttemptAt,
    };
    const gone = outcome.kind === 'failed' && outcome.disable ? outcome.disable : null;
    const disableReason =
      gone ??
      (!succeeded && subscriber.failingSince !== null && now - subscriber.failingSince >= channel.disableAfterMs
        ? `No successful delivery since ${new Date(subscriber.failingSince).toISOString()} (${channel.disableAfterSetting}).`
        : null);
    const changes: Step[] = [];
    if (succeeded) {
      if (subscriber.failingSince !== null) changes.push(channel.recovered(subscriber.id));
    } else if (subscriber.failingSince === null) {
      changes.push(channel.failing(subscriber.id, now));
    }
    if (disableReason) changes.push(channel.disable(subscriber.id, disableReason, now));
    await this.write({ record, state, step }, changes);
    this.metrics.outboxDeliveries.inc({ channel: channel.name, outcome: succeeded ? 'success' : state === 'pending' ? 'retry' : 'failed' });
    if (succeeded) this.metrics.outboxDeliveryDuration.observe({ channel: channel.name }, Math.max(0, now - delivery.createdAt) / 1000);
    if (succeeded) subscriber.failingSince = null;
    else subscriber.failingSince ??= now;
    // Ids and outcomes only: neither a subscriber's address (a URL, an e-mail address) nor the channel's free text (a
    // receiver's answer, an SMTP reply, which may quote the address) reaches the logs; the attempt log keeps those.
    if (!succeeded) {
      const next = nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString();
      this.logger.warn(
        { channel: channel.name, subscriber_id: subscriber.id, outcome: state === 'pending' ? 'retry' : 'failed', next_attempt_at: next },
        'delivery attempt failed',
      );
    }
    if (disableReason) {
      subscriber.enabled = false;
      this.logger.error(
        {
          channel: channel.name,
          subscriber_id: subscriber.id,
          cause: gone === null ? 'failing_too_long' : 'gone',
          failing_since: isoOrNull(subscriber.failingSince),
        },
        'subscriber disabled',
      );
    }
  }

  /**
   * Writes an attempt's outcome together with the others of this turn of the event loop, in one transaction: one commit
   * per attempt capped delivery at about 250/s on PostgreSQL (bench/RESULTS.md, Webhooks). A failed transaction fails
   * them all; their leases run out and the deliveries are attempted again (at least once).
   */
  private write(outcome: Outcome, changes: Step[]): Promise<void> {
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

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
