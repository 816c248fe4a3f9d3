import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { activeTraceParent } from '../telemetry/trace-ids.js';
import { EntityInsert, InsertStatement, MAX_ROWS_PER_INSERT, runInOneTransaction } from '../database/insert-transaction.js';
import { Lead } from './lead.entity.js';

/**
 * Rows another module stores in the transaction that stores a lead. Synchronous on purpose: on SQLite that transaction
 * runs with no await inside (see runInOneTransaction), so the rows must be at hand when it begins.
 */
export type LeadTransactionPart<T extends ObjectLiteral> = (lead: Lead) => readonly Partial<T>[];

interface Pending {
  lead: Lead;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Stores leads, with group commit: the leads handed in during one turn of the event loop are written in groups of at
 * most 64, each group one transaction with multi-row INSERTs, and each promise settles only once its lead is committed. On
 * SQLite a commit per lead wrote ~4 log pages each, so a checkpoint (with its fsyncs, on the event loop) stalled every
 * ~250 leads: most of the p99 tail (bench/RESULTS.md). On PostgreSQL a turn is one round trip.
 *
 * Other modules add rows to the transaction with alsoWrite(), from their onModuleInit: committed with their lead and
 * rolled back with it. A value left undefined in any row takes its column's default (EntityInsert).
 *
 * A database that cannot be reached fails the turn at once (503, no per-lead retries against a dead server); any other
 * failure retries the turn's leads one by one, each with its own rows, so that one bad lead, or one bad row added for
 * it, fails alone.
 */
@Injectable()
export class LeadWriter {
  private readonly leads: EntityInsert<Lead>;
  private readonly parts: { insert: EntityInsert<ObjectLiteral>; rows: LeadTransactionPart<ObjectLiteral>; key?: (row: Partial<ObjectLiteral>) => string }[] =
    [];
  private readonly commit: (statements: InsertStatement[]) => Promise<void>;
  private queue: Pending[] = [];
  private readonly committed: (() => void)[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.leads = new EntityInsert(dataSource, Lead);
    this.commit = runInOneTransaction(dataSource);
  }

  /** From now on, every lead is stored together with the rows that `rows` returns for it (none: an empty array). */
  alsoWrite<T extends ObjectLiteral>(entity: EntityTarget<T>, rows: LeadTransactionPart<T>): void {
    this.parts.push({ insert: new EntityInsert(this.dataSource, entity), rows });
  }

  /**
   * Like alsoWrite, for rows that many leads share (a consent wording): a row whose `key` came earlier in the same
   * transaction is left out, and one the table holds already is kept as it is (ON CONFLICT DO NOTHING).
   */
  alsoWriteShared<T extends ObjectLiteral>(entity: EntityTarget<T>, rows: LeadTransactionPart<T>, key: (row: Partial<T>) => string): void {
    this.parts.push({ insert: new EntityInsert(this.dataSource, entity, true), rows, key: key as (row: Partial<ObjectLiteral>) => string });
  }

  /** `listener` runs after each commit of leads (a delivery worker wakes up for the messages written with them). */
  afterCommit(listener: () => void): void {
    this.committed.push(listener);
  }

  /**
   * The trace of the request that handed each lead in (tracing on): a batch is written in one later turn, which runs in
   * the context of its first lead's request, so each lead's own is kept here for its messages.
   */
  private readonly traces = new WeakMap<Lead, string>();

  traceParentOf(lead: Lead): string | null {
    return this.traces.get(lead) ?? null;
  }

  /** Resolves once the lead and its rows are committed. */
  write(lead: Lead): Promise<void> {
    const trace = activeTraceParent();
    if (trace !== null) this.traces.set(lead, trace);
    return new Promise<void>((resolve, reject) => {
      if (this.queue.push({ lead, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    for (let start = 0; start < batch.length; start += MAX_ROWS_PER_INSERT) void this.store(batch.slice(start, start + MAX_ROWS_PER_INSERT));
  };

  private async store(batch: Pending[]): Promise<void> {
    try {
      await this.commit(this.statements(batch.map((pending) => pending.lead)));
      for (const pending of batch) pending.resolve();
      this.notify();
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // async, so that even a throw while a lead's rows are gathered or its values prepared settles that lead alone
      await Promise.all(
        batch.map(async (pending) => {
          try {
            await this.commit(this.statements([pending.lead]));
            pending.resolve();
            this.notify();
          } catch (leadError) {
            pending.reject(leadError);
          }
        }),
      );
    }
  }

  private notify(): void {
    for (const listener of this.committed) listener();
  }

  private statements(leads: Lead[]): InsertStatement[] {
    const statements = this.leads.statements(leads);
    for (const part of this.parts) {
      let rows = leads.flatMap((lead) => part.rows(lead));
      if (part.key && rows.length > 1) {
        const seen = new Set<string>();
        rows = rows.filter((row) => !seen.has(part.key!(row)) && seen.add(part.key!(row)));
      }
      if (rows.length > 0) statements.push(...part.insert.statements(rows));
    }
    return statements;
  }
}
