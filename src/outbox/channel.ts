import type { Step, Steps } from '../database/step-transaction.js';

/** A subscriber as the fan-out sees it: which events it takes, whether it gets them now, and since when it exists. */
export interface Subscription {
  id: string;
  events: readonly string[];
  enabled: boolean;
  createdAt: number;
}

/** Whether a message of this type, written at `at`, is for this subscriber (enabled or not): the fan-out's choice. */
export function takes(subscription: Subscription, eventType: string, at: number): boolean {
  return subscription.events.includes(eventType) && subscription.createdAt <= at;
}

/** A subscriber as the worker sees it for an attempt; a channel adds what it needs to send (a URL, secrets, an address). */
export interface Subscriber {
  id: string;
  enabled: boolean;
  /** The first failure since the last success, or null: the worker disables a subscriber failing for `disableAfterMs`. */
  failingSince: number | null;
}

/** One delivery the worker leased: a message for one subscriber of one channel. */
export interface ClaimedDelivery {
  /** The name of the channel it was leased for. */
  channel: string;
  messageId: string;
  subscriberId: string;
  attempts: number;
  step: number;
  /** When its message was written (with the lead's commit, for a lead's). */
  createdAt: number;
  leaseUntil: number;
  eventType: string;
  /** The W3C traceparent of the request that wrote the message, when it was traced. */
  traceParent?: string | null;
  /** The exact body to send; undefined when the message is gone (its subscriber was deleted meanwhile). */
  payload?: string;
}

/** What an attempt leaves in the attempt log besides its outcome. */
export interface AttemptDetail {
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
  responseBody: string | null;
}

/**
 * An attempt's outcome, as the channel judges it: delivered; to be tried again (on the channel's schedule, and no sooner
 * than `afterMs` when the receiver asked for time); or failed for good, with `disable` when the subscriber itself is gone
 * for good too (a webhook's 410).
 */
export type AttemptOutcome = AttemptDetail & ({ kind: 'succeeded' } | { kind: 'retry'; afterMs?: number } | { kind: 'failed'; disable?: string });

/**
 * A way of delivering outbox messages (docs/decisions/0034-outbox-channels.md): the outbox fans each message out to the
 * channel's subscribers, leases, schedules retries, records attempts and disables what keeps failing; the channel
 * knows its subscribers and makes one attempt. Registered by its module with Outbox.register.
 */
export interface Channel<S extends Subscriber = Subscriber> {
  /** Stored with its deliveries and attempts (`channel`): unique among the registered channels, at most 32 characters. */
  readonly name: string;
  /**
   * The table of its subscribers (`id` its key), and the SQL condition, on that table under the alias given, under which
   * one gets deliveries: the lease and the skipping of disabled subscribers join it, with no round trip to the channel.
   */
  readonly subscribers: { table: string; enabled(alias: string): string };
  /** Delays of the retries after the immediate first attempt. */
  readonly retrySchedule: readonly number[];
  /** How long one attempt may take (the lease covers it). */
  readonly attemptTimeoutMs: number;
  /** A subscriber with no success for this long is disabled. */
  readonly disableAfterMs: number;
  /** The setting that names it, for the reason a disabled subscriber shows. */
  readonly disableAfterSetting: string;
  /** Attempts in flight per subscriber on one instance. */
  readonly subscriberConcurrency: number;
  /**
   * Its every message is aimed at one subscriber (a verification code's mail): it subscribes to no event, so the
   * subscriptions the lead path writes deliveries for (SQLite) neither read nor watch its table.
   */
  readonly aimedOnly?: boolean;
  /** Every subscriber, read inside the fan-out's transaction. */
  subscriptions(): Steps<Subscription[]>;
  /** The subscribers of a batch of leased deliveries, once per lease: one missing was deleted. */
  load(ids: readonly string[]): Promise<Map<string, S>>;
  /** One attempt. Throwing is not an outcome: the lease runs out, and the delivery is tried again. */
  attempt(delivery: ClaimedDelivery & { payload: string }, subscriber: S): Promise<AttemptOutcome>;
  /** Whether any subscriber exists (SQLite: without one, leads are stored without their messages). */
  hasSubscribers(): Promise<boolean>;
  /** Statements written with the attempt's outcome: a subscriber starts failing, recovers, or is disabled. */
  failing(id: string, now: number): Step;
  recovered(id: string): Step;
  disable(id: string, reason: string, now: number): Step;
}
