import { Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import type { Steps } from '../database/step-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { leadViewOf } from '../leads/lead-reader.service.js';
import { LeadScreeningService } from '../leads/lead-screening.service.js';
import { LeadWriter } from '../leads/lead-writer.service.js';
import type { ScreeningVerdict } from '../screening/screening.js';
import type { Lead } from '../leads/lead.entity.js';
import { Metrics } from '../telemetry/metrics.js';
import { activeTraceParent } from '../telemetry/trace-ids.js';
import { type Channel, type Subscription, takes } from './channel.js';
import { messageId, messagePayload } from './outbox-events.js';
import { OutboxDelivery } from './outbox-delivery.entity.js';
import { OutboxMessage } from './outbox-message.entity.js';
import { Backlog, OutboxStore } from './outbox-store.js';
import { OutboxWorker } from './outbox-worker.service.js';

/** How long a backlog read answers health and metrics. */
const BACKLOG_FRESH_MS = 1000;

/** The message a new lead writes, by its screening verdict. */
const INTAKE_EVENTS: Record<ScreeningVerdict, string | undefined> = { accepted: 'lead.received', held: 'lead.held', spam: undefined };

/**
 * The producer side of the outbox (docs/decisions/0034-outbox-channels.md), one API for every event: a lead's
 * `lead.received` or `lead.held` is written in the transaction that stores it (LeadWriter.alsoWrite), a released lead's
 * `lead.received` in the release's (LeadScreeningService.onRelease); `publish` adds an event to any other step
 * transaction (an erasure's `lead.erased`, a revocation's `consent.revoked`); `message` is a row aimed at one
 * subscriber (a channel's test). Channels plug in with `register`.
 */
@Injectable()
export class Outbox implements OnModuleInit, OnApplicationBootstrap {
  private readonly channels: Channel[] = [];
  /**
   * False only on SQLite (one instance), while this process knows that no subscriber exists: a lead is then stored
   * without its message, which no subscriber could ever get (the fan-out gives a subscriber the messages created no
   * earlier than itself). Measured: `faf0218` served 1.28× this lead path with the message, 1.18× without it
   * (bench/RESULTS.md, "The lead path against faf0218"). PostgreSQL always writes it: another instance may have just
   * created a subscriber.
   */
  private subscribersMayExist = true;
  /** Subscriber creations begun, and those not yet finished: a count taken meanwhile may miss one. */
  private creations = 0;
  private creating = 0;
  /** The latest message left out: a subscriber created later is dated after it. */
  private leftOutUpTo = 0;
  /**
   * SQLite: every channel's subscriptions, as of a count of subscriber changes (outbox_subscriber_changes, moved by
   * triggers on the subscriber tables); a lead's message then gets its deliveries in the lead's own transaction and is
   * written dispatched, with no fan-out transaction and no dispatched_at update after it. Measured (bench/RESULTS.md,
   * "E-mail notifications … deliveries in the lead's transaction"): intake with one e-mail recipient from 0.61 to
   * INLINE_GAIN of intake with none. Out of date (the count moved), or while a subscriber is being created, the message
   * is left to the fan-out as before, and the subscriptions are read again.
   */
  private known?: { changes: number; subscribed: [Channel, Subscription[]][] };
  private reading = false;
  /** The change count read in this turn of the event loop (one read for every lead the turn writes). */
  private changesNow?: number;
  /** The deliveries of a lead whose message is written dispatched, from its message row to its delivery rows. */
  private readonly deliveriesOf = new WeakMap<Lead, Partial<OutboxDelivery>[]>();
  private backlogRead?: { at: number; value: Promise<Backlog> };

  constructor(
    private readonly store: OutboxStore,
    private readonly worker: OutboxWorker,
    private readonly writer: LeadWriter,
    private readonly screening: LeadScreeningService,
    private readonly metrics: Metrics,
  ) {
    metrics.onScrape(
      'outbox_pending',
      async () => {
        const now = Date.now();
        const { channels } = await this.backlog();
        for (const [channel, { pending, oldest }] of Object.entries(channels)) {
          metrics.outboxPending.set({ channel }, pending);
          metrics.outboxOldestPendingAge.set({ channel }, oldest === null ? 0 : Math.max(0, (now - oldest) / 1000));
        }
      },
      () => {
        metrics.outboxPending.reset();
        metrics.outboxOldestPendingAge.reset();
      },
    );
  }

  register(channel: Channel): void {
    this.worker.register(channel);
    this.channels.push(channel);
    this.metrics.channelRegistered(channel.name);
  }

  /**
   * What waits to be delivered, per registered channel (health, metrics). Reads are shared for a second: public health
   * checks and scrapes, however many, count a long backlog at most once a second (the count walks the pending rows).
   */
  backlog(): Promise<Backlog> {
    if (this.backlogRead && Date.now() - this.backlogRead.at < BACKLOG_FRESH_MS) return this.backlogRead.value;
    const value = this.store.backlog(this.channels);
    const read = { at: Date.now(), value };
    this.backlogRead = read;
    value.catch(() => {
      if (this.backlogRead === read) this.backlogRead = undefined;
    });
    return value;
  }

  onModuleInit(): void {
    this.writer.alsoWrite(OutboxMessage, (lead) => {
      // At intake an accepted lead is announced, a held one only to subscribers that ask for lead.held, spam to nobody;
      // a held or spam lead gets its lead.received when a person first releases it (below).
      const eventType = INTAKE_EVENTS[lead.screeningVerdict];
      if (eventType === undefined || this.leaveOut(lead.receivedAt)) return [];
      const message = this.message(eventType, lead.receivedAt, leadViewOf(lead), lead.id, null, this.writer.traceParentOf(lead));
      const deliveries = this.deliveriesNow(message);
      if (deliveries) {
        message.dispatchedAt = Date.now();
        this.deliveriesOf.set(lead, deliveries);
      } else {
        this.deliveriesOf.delete(lead);
      }
      return [message];
    });
    // After the messages (a delivery refers to its message).
    this.writer.alsoWrite(OutboxDelivery, (lead) => this.deliveriesOf.get(lead) ?? []);
    this.writer.afterCommit(() => this.wakeIfSubscribed());
    // A held or spam lead's first release announces it, with the view it has then (its verdict by the operator).
    this.screening.onRelease(OutboxMessage, (lead, releasedAt) =>
      this.leaveOut(releasedAt) ? [] : [this.message('lead.received', releasedAt, lead, lead.id)],
    );
    this.screening.afterRelease(() => this.wakeIfSubscribed());
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.store.postgres) await this.store.checkChangeTriggers(this.eventChannels());
    await this.subscribersChanged();
  }

  /** A message row, written by the caller in its own transaction (with its lead, or alone for one subscriber). */
  message(
    eventType: string,
    at: Date,
    data: unknown,
    leadId: string | null,
    subscriberId: string | null = null,
    traceParent: string | null = activeTraceParent(),
  ): OutboxMessage {
    return {
      id: messageId(uuidv7(at.getTime())),
      eventType,
      payload: messagePayload(eventType, at, data),
      leadId,
      subscriberId,
      createdAt: at.getTime(),
      traceParent,
      dispatchedAt: null,
    };
  }

  /**
   * Writes an event for every subscriber of its type, or for the one subscriber named, in the caller's step
   * transaction; wake() after its commit.
   */
  publish(type: string, data: unknown, now: number, subscriberId: string | null = null): Steps<string> {
    return this.store.publish(type, data, now, subscriberId);
  }

  /**
   * How many enabled subscribers, of every channel, a message of this type written now would be delivered to (as the
   * fan-out chooses them): what an erasure says it told (`endpoints_notified`), or would tell.
   */
  async subscribersOf(type: string, now: number): Promise<number> {
    let count = 0;
    for (const channel of this.channels) {
      const subscriptions = await this.store.transaction(() => channel.subscriptions());
      count += subscriptions.filter((s) => s.enabled && takes(s, type, now)).length;
    }
    return count;
  }

  /**
   * Removes the outbox's messages of these leads, with their deliveries and attempt log in every channel (pending ones
   * included: nothing of an erased lead leaves after its erasure), in an erasure's step transaction.
   */
  forgetLeads(leadIds: readonly string[]): Steps<{ messageIds: string[]; deliveries: number; attempts: number }> {
    return this.store.forgetLeads(leadIds);
  }

  /** What forgetLeads would remove (an erasure's dry run). */
  countForLeads(leadIds: readonly string[]): Promise<{ messages: number; deliveries: number; attempts: number }> {
    return this.store.countForLeads(leadIds);
  }

  /** New messages were committed on this instance. */
  wake(): void {
    this.worker.wake();
  }

  /** These messages were erased: their leased deliveries not yet started here must not be sent. */
  forget(messageIds: readonly string[]): void {
    this.worker.forget(messageIds);
  }

  /**
   * A channel creates a subscriber through this: from here on lead messages are written, and `create` gets the
   * earliest time the new subscriber may be dated (after every message left out).
   */
  async subscribing<T>(create: (notBefore: number) => Promise<T>): Promise<T> {
    this.subscribersMayExist = true;
    this.creations++;
    this.creating++;
    try {
      return await create(this.leftOutUpTo + 1);
    } finally {
      this.creating--;
    }
  }

  /**
   * SQLite: learns whether any channel has a subscriber (after a deletion, and at start), unless a creation under way
   * could make the answer wrong. A count that fails leaves the messages on.
   */
  async subscribersChanged(): Promise<void> {
    if (this.store.postgres || this.creating > 0) return;
    const creations = this.creations;
    const exist = await Promise.all(this.channels.map((channel) => channel.hasSubscribers())).then(
      (answers) => answers.some(Boolean),
      () => true,
    );
    if (creations === this.creations) this.subscribersMayExist = exist;
  }

  /**
   * The delivery rows of a lead's message for the subscriptions known, when they are known to be current (SQLite); else
   * undefined: the fan-out makes them, as it does for a subscriber that is disabled (its delivery is skipped and logged).
   */
  private deliveriesNow(message: OutboxMessage): Partial<OutboxDelivery>[] | undefined {
    if (this.store.postgres || this.creating > 0) return undefined;
    if (this.changesNow === undefined) {
      this.changesNow = this.store.subscriberChanges();
      queueMicrotask(() => (this.changesNow = undefined));
    }
    const known = this.known;
    if (known?.changes !== this.changesNow) {
      this.readSubscriptions();
      return undefined;
    }
    const rows: Partial<OutboxDelivery>[] = [];
    const now = Date.now();
    for (const [channel, subscriptions] of known.subscribed) {
      for (const subscription of subscriptions) {
        if (!takes(subscription, message.eventType, message.createdAt)) continue;
        if (!subscription.enabled) return undefined;
        rows.push({
          messageId: message.id,
          subscriberId: subscription.id,
          channel: channel.name,
          messageCreatedAt: message.createdAt,
          state: 'pending',
          attempts: 0,
          step: 0,
          nextAttemptAt: now,
          leaseOwner: null,
          leaseUntil: null,
          updatedAt: now,
        });
      }
    }
    return rows;
  }

  /** Reads every channel's subscriptions again, after the lead's transaction of this turn; one read at a time. */
  private readSubscriptions(): void {
    if (this.reading) return;
    this.reading = true;
    setImmediate(() => {
      const creations = this.creations;
      this.store
        .subscriptionsNow(this.eventChannels())
        .then(
          (known) => {
            if (creations === this.creations && this.creating === 0) this.known = known;
          },
          () => undefined,
        )
        .finally(() => (this.reading = false));
    });
  }

  /** The channels whose subscribers take events (all but those whose messages are each aimed at one subscriber). */
  private eventChannels(): Channel[] {
    return this.channels.filter((channel) => !channel.aimedOnly);
  }

  private leaveOut(at: Date): boolean {
    if (this.subscribersMayExist) return false;
    this.leftOutUpTo = Math.max(this.leftOutUpTo, at.getTime());
    return true;
  }

  private wakeIfSubscribed(): void {
    if (this.subscribersMayExist) this.worker.wake();
  }
}
