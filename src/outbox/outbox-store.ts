import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { type Channel, type ClaimedDelivery, type Subscription, takes } from './channel.js';
import { activeTraceParent } from '../telemetry/trace-ids.js';
import { messageId, messagePayload } from './outbox-events.js';

export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'skipped';

/** One delivery of a lead's message, with its latest attempt (OutboxStore.leadDeliveries). */
export interface LeadDelivery {
  messageId: string;
  eventType: string;
  createdAt: number;
  channel: string;
  subscriberId: string;
  state: DeliveryState;
  attempts: number;
  updatedAt: number;
  lastAttempt: { at: number; outcome: AttemptRecord['outcome']; statusCode: number | null; error: string | null } | null;
}

/** The most deliveries a lead's page lists. */
export const LEAD_DELIVERIES_MAX = 200;

/** What an attempt (or a skip) leaves: its log row, and its delivery's next state and step in the retry schedule. */
export interface Outcome {
  record: AttemptRecord;
  state: DeliveryState;
  step: number;
}

export interface AttemptRecord {
  channel: string;
  messageId: string;
  subscriberId: string;
  eventType: string;
  attempt: number;
  attemptedAt: number;
  outcome: 'succeeded' | 'failed' | 'skipped';
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
  responseBody: string | null;
  nextAttemptAt: number | null;
}

/** What the store needs of a channel to keep to its rows. */
export type ChannelName = Pick<Channel, 'name'>;

/** One row of a subscriber's attempt log, as stored. */
export type AttemptRow = Record<string, unknown>;

/** The outbox's tables (named when webhooks were its only channel), for what maintains them whole (an erasure's VACUUM). */
export const OUTBOX_TABLES = ['webhook_messages', 'webhook_deliveries', 'webhook_attempts'] as const;

const CHANGES = 'SELECT n FROM outbox_subscriber_changes WHERE id = 1';

/** Messages fanned out, and skipped deliveries logged, per statement at most. */
const BATCH = 200;
/** Rows a replay or a subscriber's deletion handles per statement, with a turn of the event loop between statements. */
const LARGE_BATCH = 1000;

/**
 * The one home of the outbox tables' SQL (docs/decisions/0027-webhooks-outbox.md, 0034-outbox-channels.md): messages,
 * their deliveries (one per message and subscriber; `endpoint_id` names the subscriber, `channel` its channel) and the
 * attempt log. The tables keep the names they had when webhooks were the only channel. What a channel asks for
 * (lease, skip, record, replay, forget a subscriber, its attempt log) is filtered by its `channel`; what a message
 * asks for (fan-out, erasure, pruning) spans every channel. Transactions are StepTransactions: generators of
 * statements, which producers extend with their own (a lead's, an erasure's).
 */
@Injectable()
export class OutboxStore {
  readonly postgres: boolean;
  private readonly transactions: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.transactions = new StepTransactions(dataSource);
    this.postgres = this.transactions.postgres;
  }

  private p(n: number): string {
    return this.transactions.p(n);
  }

  private list(first: number, count: number): string {
    return this.transactions.list(first, count);
  }

  private query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.transactions.query<T>(sql, params);
  }

  transaction<T>(steps: () => Steps<T>): Promise<T> {
    return this.transactions.run(steps);
  }

  private changesRead?: { db: Database; statement: Statement };

  /**
   * SQLite: how many times a subscriber table has changed (outbox_subscriber_changes, moved by triggers), read at once on
   * the connection, so that a lead's transaction that follows in the same turn sees the same subscribers.
   */
  subscriberChanges(): number {
    const db = this.transactions.sqlite();
    if (this.changesRead?.db !== db) this.changesRead = { db, statement: db.prepare(CHANGES).pluck() };
    return this.changesRead.statement.get() as number;
  }

  /**
   * SQLite: refuses to start unless every channel's subscriber table moves the change count on insert, update and
   * delete (a channel added without its triggers would let leads be written with out-of-date deliveries).
   */
  async checkChangeTriggers(channels: readonly Channel[]): Promise<void> {
    for (const channel of channels) {
      const triggers = await this.query<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", [channel.subscribers.table]);
      const missing = ['INSERT', 'UPDATE', 'DELETE'].filter(
        (event) => !triggers.some(({ sql }) => new RegExp(`\\bAFTER ${event} ON\\b[^]*UPDATE outbox_subscriber_changes SET n = n \\+ 1`, 'i').test(sql)),
      );
      if (missing.length) {
        throw new Error(
          `outbox: the ${channel.name} channel's table ${channel.subscribers.table} has no trigger moving outbox_subscriber_changes after ${missing.join(', ')} (see migrations/1766110000000-outbox-subscriber-changes.ts)`,
        );
      }
    }
  }

  /** Every channel's subscriptions and the count of changes they are as of (SQLite), in one transaction. */
  subscriptionsNow(channels: readonly Channel[]): Promise<{ changes: number; subscribed: [Channel, Subscription[]][] }> {
    return this.transaction(function* () {
      const [row] = yield [CHANGES, []];
      const subscribed: [Channel, Subscription[]][] = [];
      for (const channel of channels) subscribed.push([channel, yield* channel.subscriptions()]);
      return { changes: Number(row.n), subscribed };
    });
  }

  /**
   * Gives the undispatched messages (oldest first, at most BATCH) one delivery per subscriber, of every channel, that
   * exists, subscribes to the event and is no newer than the message (a message aimed at one subscriber: that one
   * only, in whichever channel has it): pending, or skipped (and logged) for a disabled one. On PostgreSQL the messages
   * are locked SKIP LOCKED, so instances share the work. Returns how many messages were fanned out.
   */
  fanOut(channels: readonly Channel[], now: number): Promise<number> {
    return this.transaction(() => this.fanOutSteps(channels, now));
  }

  private *fanOutSteps(channels: readonly Channel[], now: number): Steps<number> {
    const p = this.p.bind(this);
    const messages = yield [
      `SELECT id, event_type, endpoint_id, created_at FROM webhook_messages WHERE dispatched_at IS NULL ORDER BY id LIMIT ${BATCH}${this.postgres ? ' FOR UPDATE SKIP LOCKED' : ''}`,
      [],
    ];
    if (messages.length === 0) return 0;
    const subscribed: [Channel, Subscription[]][] = [];
    for (const channel of channels) subscribed.push([channel, yield* channel.subscriptions()]);
    const deliveries: unknown[][] = [];
    const skips: AttemptRecord[] = [];
    for (const message of messages) {
      const createdAt = Number(message.created_at);
      for (const [channel, subscriptions] of subscribed) {
        const targets = message.endpoint_id
          ? subscriptions.filter((e) => e.id === message.endpoint_id)
          : subscriptions.filter((e) => takes(e, message.event_type as string, createdAt));
        for (const endpoint of targets) {
          deliveries.push([message.id, endpoint.id, channel.name, createdAt, endpoint.enabled ? 'pending' : 'skipped', endpoint.enabled ? now : null, now]);
          if (!endpoint.enabled) skips.push(skipRecord(channel.name, message.id as string, endpoint.id, message.event_type as string, 0, now));
        }
      }
    }
    for (let start = 0; start < deliveries.length; start += BATCH) {
      const rows = deliveries.slice(start, start + BATCH);
      const tuples = rows.map((_, i) => `(${[1, 2, 3, 4, 5, 6, 7].map((k) => p(i * 7 + k)).join(', ')}, 0, 0)`);
      yield [
        `INSERT INTO webhook_deliveries (message_id, endpoint_id, channel, message_created_at, state, next_attempt_at, updated_at, attempts, step) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING`,
        rows.flat(),
      ];
    }
    if (skips.length) yield* this.logAttempts(skips);
    const ids = messages.map((m) => m.id);
    yield [`UPDATE webhook_messages SET dispatched_at = ${p(1)} WHERE id IN (${this.list(2, ids.length)})`, [now, ...ids]];
    return messages.length;
  }

  /**
   * Leases up to `limit` due pending deliveries of the channel's enabled subscribers to `owner` until `leaseUntil`. One
   * statement, walking the channel's part of the due index (channel, next_attempt_at); on PostgreSQL its rows are picked
   * FOR UPDATE SKIP LOCKED, so two instances never claim the same row.
   */
  async claim(channel: Channel, owner: string, now: number, leaseUntil: number, limit: number, busySubscribers: string[] = []): Promise<ClaimedDelivery[]> {
    const p = this.p.bind(this);
    const { table, enabled } = channel.subscribers;
    // Subscribers with no room left on this instance are passed over, so that a slow one cannot take every slot.
    const busy = busySubscribers.length ? ` AND d.endpoint_id NOT IN (${this.list(6, busySubscribers.length)})` : '';
    const due = `SELECT d.message_id, d.endpoint_id FROM webhook_deliveries d JOIN ${table} e ON e.id = d.endpoint_id
      WHERE d.channel = ${p(3)} AND d.state = 'pending' AND d.next_attempt_at <= ${p(4)} AND (d.lease_until IS NULL OR d.lease_until < ${p(5)}) AND (${enabled('e')})${busy}
      ORDER BY d.next_attempt_at LIMIT ${Math.floor(limit)}${this.postgres ? ' FOR UPDATE OF d SKIP LOCKED' : ''}`;
    const rows = await this.query<Record<string, unknown>>(
      this.postgres
        ? `UPDATE webhook_deliveries w SET lease_owner = $1, lease_until = $2 FROM (${due}) c
             WHERE w.message_id = c.message_id AND w.endpoint_id = c.endpoint_id RETURNING w.message_id, w.endpoint_id, w.attempts, w.step, w.message_created_at`
        : `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE (message_id, endpoint_id) IN (${due})
             RETURNING message_id, endpoint_id, attempts, step, message_created_at`,
      [owner, leaseUntil, channel.name, now, now, ...busySubscribers],
    );
    if (rows.length === 0) return [];
    // The bodies in one query for the whole batch, not one per attempt (bench/RESULTS.md, Webhooks).
    const messages = await this.query<{ id: string; event_type: string; payload: string; trace_parent: string | null }>(
      `SELECT id, event_type, payload, trace_parent FROM webhook_messages WHERE id IN (${this.list(1, rows.length)})`,
      rows.map((row) => row.message_id),
    );
    const byId = new Map(messages.map((message) => [message.id, message]));
    return rows.map((row) => ({
      channel: channel.name,
      messageId: row.message_id as string,
      subscriberId: row.endpoint_id as string,
      attempts: Number(row.attempts),
      step: Number(row.step),
      createdAt: Number(row.message_created_at),
      leaseUntil,
      eventType: byId.get(row.message_id as string)?.event_type ?? '',
      payload: byId.get(row.message_id as string)?.payload,
      traceParent: byId.get(row.message_id as string)?.trace_parent ?? null,
    }));
  }

  /** The ids of the channel's subscribers that get deliveries now (a small table: its endpoints, its recipients). */
  async enabledSubscribers(channel: Channel): Promise<string[]> {
    const { table, enabled } = channel.subscribers;
    return (await this.query<{ id: string }>(`SELECT e.id FROM ${table} e WHERE ${enabled('e')}`)).map((row) => row.id);
  }

  /** Gives back leases this owner holds (a clean shutdown; on SQLite, the leases of a process that died). */
  async releaseLeases(owner?: string): Promise<void> {
    await this.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE lease_owner ${owner === undefined ? 'IS NOT NULL' : `= ${this.p(1)}`}`,
      owner === undefined ? [] : [owner],
    );
  }

  /**
   * The outcomes of attempts: each delivery's next state and its log row, only while `owner` still holds the lease
   * (after a lease ran out another instance may own the row, and logs its own attempt; a deleted endpoint took its
   * deliveries with it). On PostgreSQL one statement for them all: a round trip per statement, each awaited in a busy
   * event loop, capped delivery far below intake (bench/RESULTS.md, Webhooks).
   */
  *recordAttempts(owner: string, outcomes: readonly Outcome[]): Steps<void> {
    if (outcomes.length === 0) return;
    const p = this.p.bind(this);
    if (!this.postgres) {
      // The log rows of the turn in one multi-row INSERT, after the updates that still held their lease.
      const logged: AttemptRecord[] = [];
      for (const { record, state, step } of outcomes) {
        const updated = yield [
          `UPDATE webhook_deliveries SET state = ?, attempts = ?, step = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
            WHERE message_id = ? AND endpoint_id = ? AND channel = ? AND lease_owner = ? RETURNING message_id`,
          [state, record.attempt, step, record.nextAttemptAt, record.attemptedAt, record.messageId, record.subscriberId, record.channel, owner],
        ];
        if (updated.length) logged.push(record);
      }
      if (logged.length) yield* this.logAttempts(logged);
      return;
    }
    const params: unknown[] = [owner];
    const tuple = (values: unknown[], types: string[]) => `(${values.map((value, i) => `${p(params.push(value))}::${types[i]}`).join(', ')})`;
    const next = outcomes.map(({ record, state, step }) =>
      tuple(
        [record.messageId, record.subscriberId, record.channel, state, record.attempt, step, record.nextAttemptAt, record.attemptedAt],
        ['varchar', 'varchar', 'varchar', 'varchar', 'int', 'int', 'bigint', 'bigint'],
      ),
    );
    const logged = outcomes.map(({ record: r }) =>
      tuple(attemptRow(r), ['varchar', 'varchar', 'varchar', 'varchar', 'varchar', 'int', 'bigint', 'varchar', 'int', 'varchar', 'int', 'text', 'bigint']),
    );
    yield [
      `WITH v (message_id, endpoint_id, channel, state, attempts, step, next_attempt_at, updated_at) AS (VALUES ${next.join(', ')}),
        u AS (UPDATE webhook_deliveries d SET state = v.state, attempts = v.attempts, step = v.step, next_attempt_at = v.next_attempt_at,
            lease_owner = NULL, lease_until = NULL, updated_at = v.updated_at
          FROM v WHERE d.message_id = v.message_id AND d.endpoint_id = v.endpoint_id AND d.channel = v.channel AND d.lease_owner = $1
          RETURNING d.message_id, d.endpoint_id)
      INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS})
      SELECT ${ATTEMPT_COLUMNS.replace(/(\w+)/g, 'a.$1')}
        FROM (VALUES ${logged.join(', ')}) a (${ATTEMPT_COLUMNS})
        JOIN u ON u.message_id = a.message_id AND u.endpoint_id = a.endpoint_id`,
      params,
    ];
  }

  /**
   * Pending deliveries of the channel's disabled subscribers become skipped, one log row each, in batches; returns how many. Rows
   * still leased are left to their worker, which skips them when it sees the subscriber disabled.
   */
  skipDisabled(channel: Channel, now: number): Promise<number> {
    return this.transaction(() => this.skipDisabledSteps(channel, now));
  }

  private *skipDisabledSteps(channel: Channel, now: number): Steps<number> {
    const p = this.p.bind(this);
    const { table, enabled } = channel.subscribers;
    // Without this look at the (small) subscriber table first, the UPDATE below walked every pending delivery on each
    // turn of the worker, which turns once per attempt under load (bench/RESULTS.md, Webhooks).
    const disabled = yield [`SELECT id FROM ${table} WHERE NOT (${enabled(table)}) LIMIT 1`, []];
    if (disabled.length === 0) return 0;
    const rows = yield [
      `UPDATE webhook_deliveries SET state = 'skipped', next_attempt_at = NULL, updated_at = ${p(1)}
        WHERE (message_id, endpoint_id) IN (SELECT d.message_id, d.endpoint_id FROM webhook_deliveries d JOIN ${table} e ON e.id = d.endpoint_id
          WHERE d.channel = ${p(2)} AND d.state = 'pending' AND NOT (${enabled('e')}) AND (d.lease_until IS NULL OR d.lease_until < ${p(3)}) LIMIT ${BATCH})
        RETURNING message_id, endpoint_id, attempts`,
      [now, channel.name, now],
    ];
    if (rows.length === 0) return 0;
    const types = yield [`SELECT id, event_type FROM webhook_messages WHERE id IN (${this.list(1, rows.length)})`, rows.map((row) => row.message_id)];
    const typeOf = new Map(types.map((row) => [row.id as string, row.event_type as string]));
    yield* this.logAttempts(
      rows.map((row) =>
        skipRecord(channel.name, row.message_id as string, row.endpoint_id as string, typeOf.get(row.message_id as string) ?? '', Number(row.attempts), now),
      ),
    );
    return rows.length;
  }

  *logAttempts(records: AttemptRecord[]): Steps<void> {
    const p = this.p.bind(this);
    for (let start = 0; start < records.length; start += BATCH) {
      const rows = records.slice(start, start + BATCH);
      const tuples = rows.map((_, i) => `(${Array.from({ length: ATTEMPT_WIDTH }, (__, k) => p(i * ATTEMPT_WIDTH + k + 1)).join(', ')})`);
      yield [`INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS}) VALUES ${tuples.join(', ')}`, rows.flatMap(attemptRow)];
    }
  }

  /**
   * Removes what the outbox holds about these leads (their messages, and the deliveries and attempt logs of those
   * messages in every channel: by message, not by channel), inside an erasure's transaction (docs/decisions/0029-data-subject-requests.md). Deliveries go first: on PostgreSQL a worker recording an
   * attempt holds its delivery row, so the DELETE waits for that attempt's log row and the next statement removes it;
   * a worker that comes after finds no delivery, and logs nothing (recordAttempts). A message being fanned out is locked
   * by the fan-out; its DELETE waits, and takes the new deliveries with it (ON DELETE CASCADE).
   */
  *forgetLeads(leadIds: readonly string[]): Steps<{ messageIds: string[]; deliveries: number; attempts: number }> {
    if (leadIds.length === 0) return { messageIds: [], deliveries: 0, attempts: 0 };
    const messages = yield [`SELECT id FROM webhook_messages WHERE lead_id IN (${this.list(1, leadIds.length)})`, [...leadIds]];
    const messageIds = messages.map((row) => row.id as string);
    let deliveries = 0;
    let attempts = 0;
    for (let start = 0; start < messageIds.length; start += BATCH) {
      const ids = messageIds.slice(start, start + BATCH);
      const list = this.list(1, ids.length);
      deliveries += (yield [`DELETE FROM webhook_deliveries WHERE message_id IN (${list}) RETURNING message_id`, ids]).length;
      attempts += (yield [`DELETE FROM webhook_attempts WHERE message_id IN (${list}) RETURNING id`, ids]).length;
      yield [`DELETE FROM webhook_messages WHERE id IN (${list})`, ids];
    }
    return { messageIds, deliveries, attempts };
  }

  /**
   * Writes a message (no lead of its own: `lead_id` null) for every subscriber of its event, or for one subscriber of
   * any channel when `subscriberId` is given (a confirmation, a digest), in the caller's transaction.
   */
  *publish(type: string, data: unknown, now: number, subscriberId: string | null = null): Steps<string> {
    const id = messageId(uuidv7(now));
    const p = this.p.bind(this);
    yield [
      `INSERT INTO webhook_messages (id, event_type, payload, lead_id, endpoint_id, created_at, trace_parent, dispatched_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, NULL, ${p(4)}, ${p(5)}, ${p(6)}, NULL)`,
      [id, type, messagePayload(type, new Date(now), data), subscriberId, now, activeTraceParent()],
    ];
    return id;
  }

  /** What forgetLeads would remove for these leads, counted without a transaction (an erasure's dry run). */
  async countForLeads(leadIds: readonly string[]): Promise<{ messages: number; deliveries: number; attempts: number }> {
    if (leadIds.length === 0) return { messages: 0, deliveries: 0, attempts: 0 };
    const n = leadIds.length;
    // The same list three times: SQLite's ? placeholders are positional.
    const [found] = await this.query<Record<'messages' | 'deliveries' | 'attempts', unknown>>(
      `SELECT (SELECT COUNT(*) FROM webhook_messages WHERE lead_id IN (${this.list(1, n)})) AS messages,
        (SELECT COUNT(*) FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id WHERE m.lead_id IN (${this.list(n + 1, n)})) AS deliveries,
        (SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id WHERE m.lead_id IN (${this.list(2 * n + 1, n)})) AS attempts`,
      [...leadIds, ...leadIds, ...leadIds],
    );
    return { messages: Number(found.messages), deliveries: Number(found.deliveries), attempts: Number(found.attempts) };
  }

  /**
   * A subscriber's deliveries and attempt log in its channel, before the subscriber itself goes (no foreign key does it):
   * in batches with a turn between them (one cascade over a large log held the event loop).
   */
  async forgetSubscriber(channel: ChannelName, subscriberId: string): Promise<void> {
    const p = this.p.bind(this);
    for (const [table, key] of [
      ['webhook_deliveries', 'message_id'],
      ['webhook_attempts', 'id'],
    ]) {
      for (;;) {
        const rows = await this.query(
          `DELETE FROM ${table} WHERE endpoint_id = ${p(1)} AND channel = ${p(2)}
            AND ${key} IN (SELECT ${key} FROM ${table} WHERE endpoint_id = ${p(3)} AND channel = ${p(4)} LIMIT ${LARGE_BATCH}) RETURNING ${key}`,
          [subscriberId, channel.name, subscriberId, channel.name],
        );
        if (rows.length < LARGE_BATCH) break;
        await nextTurn();
      }
    }
  }

  /**
   * The subscriber's messages (in its channel) created in [since, until) are due again, each as a new series of
   * attempts. In keyset batches with a turn of the event loop between them: a replay of a year must not hold it.
   * Returns how many.
   */
  async replay(channel: ChannelName, subscriberId: string, since: number, until: number | undefined, now: number): Promise<number> {
    const p = this.p.bind(this);
    let after: [number, string] | undefined;
    let replayed = 0;
    for (;;) {
      const from = after ? `(message_created_at, message_id) > (${p(4)}, ${p(5)})` : `message_created_at >= ${p(4)}`;
      const rows = await this.query<{ message_id: string; message_created_at: unknown }>(
        `SELECT message_id, message_created_at FROM webhook_deliveries WHERE endpoint_id = ${p(1)} AND channel = ${p(2)} AND message_created_at < ${p(3)} AND ${from}
          ORDER BY message_created_at, message_id LIMIT ${LARGE_BATCH}`,
        [subscriberId, channel.name, until ?? Number.MAX_SAFE_INTEGER, ...(after ?? [since])],
      );
      if (rows.length === 0) break;
      const ids = rows.map((row) => row.message_id);
      const updated = await this.query(
        `UPDATE webhook_deliveries SET state = 'pending', step = 0, next_attempt_at = ${p(1)}, updated_at = ${p(2)}
          WHERE endpoint_id = ${p(3)} AND channel = ${p(4)} AND message_id IN (${this.list(5, ids.length)}) RETURNING message_id`,
        [now, now, subscriberId, channel.name, ...ids],
      );
      replayed += updated.length;
      if (rows.length < LARGE_BATCH) break;
      const last = rows[rows.length - 1];
      after = [Number(last.message_created_at), last.message_id];
      await nextTurn();
    }
    return replayed;
  }

  /**
   * One page of a subscriber's attempt log (in its channel), newest first: `limit + 1` rows (the extra one says there is a next page),
   * of one message when `messageId` is given, before the `before` key (`attempted_at`, `id`) when given.
   */
  attempts(channel: ChannelName, subscriberId: string, limit: number, messageId?: string, before?: [number, string]): Promise<AttemptRow[]> {
    const p = this.p.bind(this);
    const params: unknown[] = [subscriberId, channel.name];
    let where = `endpoint_id = ${p(1)} AND channel = ${p(2)}`;
    if (messageId !== undefined) {
      params.push(messageId);
      where += ` AND message_id = ${p(params.length)}`;
    }
    if (before !== undefined) {
      params.push(before[0], before[0], before[1]);
      where += ` AND (attempted_at < ${p(params.length - 2)} OR (attempted_at = ${p(params.length - 1)} AND id < ${p(params.length)}))`;
    }
    return this.query<AttemptRow>(
      `SELECT id, message_id, event_type, attempt, attempted_at, outcome, status_code, error, latency_ms, response_body, next_attempt_at
        FROM webhook_attempts WHERE ${where} ORDER BY attempted_at DESC, id DESC LIMIT ${limit + 1}`,
      params,
    );
  }

  /**
   * Deletes, in small batches, messages older than `cutoff` with no pending delivery (their deliveries go with them),
   * and attempt log rows older than `cutoff`. Returns the rows deleted.
   */
  async prune(cutoff: number): Promise<{ messages: number; attempts: number }> {
    const p = this.p.bind(this);
    const messages = await this.query(
      `DELETE FROM webhook_messages WHERE id IN (SELECT m.id FROM webhook_messages m WHERE m.created_at < ${p(1)} AND m.dispatched_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = m.id AND d.state = 'pending') ORDER BY m.created_at LIMIT 500) RETURNING id`,
      [cutoff],
    );
    const attempts = await this.query(
      `DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE attempted_at < ${p(1)} LIMIT 1000) RETURNING id`,
      [cutoff],
    );
    return { messages: messages.length, attempts: attempts.length };
  }

  /**
   * What the outbox did with a lead's messages (the inbox's lead page): each delivery, of every channel, with its state
   * and its latest attempt. Bounded: a lead has a message or two, each for at most the subscribers that exist (capped).
   */
  async leadDeliveries(leadId: string): Promise<LeadDelivery[]> {
    const p = this.p.bind(this);
    const rows = await this.query<Record<string, unknown>>(
      `SELECT m.id AS message_id, m.event_type, m.created_at, d.channel, d.endpoint_id, d.state, d.attempts, d.updated_at
        FROM webhook_messages m JOIN webhook_deliveries d ON d.message_id = m.id WHERE m.lead_id = ${p(1)}
        ORDER BY m.created_at, m.id, d.channel, d.endpoint_id LIMIT ${LEAD_DELIVERIES_MAX}`,
      [leadId],
    );
    if (rows.length === 0) return [];
    const messageIds = [...new Set(rows.map((row) => row.message_id as string))];
    const attempts = await this.query<Record<string, unknown>>(
      `SELECT message_id, endpoint_id, attempted_at, outcome, status_code, error FROM webhook_attempts
        WHERE message_id IN (${this.list(1, messageIds.length)}) ORDER BY attempted_at DESC, id DESC LIMIT ${LARGE_BATCH}`,
      messageIds,
    );
    const latest = new Map<string, Record<string, unknown>>();
    for (const attempt of attempts) {
      const key = `${attempt.message_id as string} ${attempt.endpoint_id as string}`;
      if (!latest.has(key)) latest.set(key, attempt);
    }
    return rows.map((row) => {
      const last = latest.get(`${row.message_id as string} ${row.endpoint_id as string}`);
      return {
        messageId: row.message_id as string,
        eventType: row.event_type as string,
        createdAt: Number(row.created_at),
        channel: row.channel as string,
        subscriberId: row.endpoint_id as string,
        state: row.state as DeliveryState,
        attempts: Number(row.attempts),
        updatedAt: Number(row.updated_at),
        lastAttempt: last
          ? {
              at: Number(last.attempted_at),
              outcome: last.outcome as AttemptRecord['outcome'],
              statusCode: last.status_code === null ? null : Number(last.status_code),
              error: (last.error as string | null) ?? null,
            }
          : null,
      };
    });
  }

  /** What health reports: deliveries waiting for an attempt plus messages not yet fanned out, and the oldest's age. */
  /**
   * What waits to be delivered: per channel, the pending deliveries of its enabled subscribers and the oldest one's
   * message time; and the messages not yet fanned out (normally for milliseconds; for longer only when no worker runs).
   */
  async backlog(channels: readonly Channel[]): Promise<Backlog> {
    const byChannel: Backlog['channels'] = {};
    for (const channel of channels) {
      const { table, enabled } = channel.subscribers;
      const [row] = await this.query<{ n: unknown; oldest: unknown }>(
        `SELECT COUNT(*) AS n, MIN(d.message_created_at) AS oldest FROM webhook_deliveries d JOIN ${table} e ON e.id = d.endpoint_id
          WHERE d.channel = ${this.p(1)} AND d.state = 'pending' AND (${enabled('e')})`,
        [channel.name],
      );
      byChannel[channel.name] = { pending: Number(row.n), oldest: numberOrNull(row.oldest) };
    }
    const [messages] = await this.query<{ n: unknown; oldest: unknown }>(
      'SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_messages WHERE dispatched_at IS NULL',
    );
    return { channels: byChannel, undispatched: { pending: Number(messages.n), oldest: numberOrNull(messages.oldest) } };
  }
}

/** Counts of waiting work and the time (ms) of the oldest message among them, null when none waits. */
export interface Backlog {
  channels: Record<string, { pending: number; oldest: number | null }>;
  undispatched: { pending: number; oldest: number | null };
}

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The columns of both INSERTs into webhook_attempts, in the order of attemptRow. */
const ATTEMPT_COLUMNS =
  'id, message_id, endpoint_id, channel, event_type, attempt, attempted_at, outcome, status_code, error, latency_ms, response_body, next_attempt_at';
const ATTEMPT_WIDTH = ATTEMPT_COLUMNS.split(',').length;

/** A log row's values, in the order of ATTEMPT_COLUMNS. */
function attemptRow(r: AttemptRecord): unknown[] {
  return [
    uuidv7(r.attemptedAt),
    r.messageId,
    r.subscriberId,
    r.channel,
    r.eventType,
    r.attempt,
    r.attemptedAt,
    r.outcome,
    r.statusCode,
    r.error,
    r.latencyMs,
    r.responseBody,
    r.nextAttemptAt,
  ];
}

export function skipRecord(channel: string, messageId: string, subscriberId: string, eventType: string, attempt: number, now: number): AttemptRecord {
  return {
    channel,
    messageId,
    subscriberId,
    eventType,
    attempt,
    attemptedAt: now,
    outcome: 'skipped',
    statusCode: null,
    error: 'endpoint_disabled',
    latencyMs: null,
    responseBody: null,
    nextAttemptAt: null,
  };
}
