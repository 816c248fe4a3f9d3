import type { Database, Statement } from 'better-sqlite3';
import type { DataSource } from 'typeorm';

/** One statement of a transaction: its result rows (RETURNING or SELECT) come back at the `yield`. */
export type Step = [sql: string, params: unknown[]];
export type Steps<T> = Generator<Step, T, Record<string, unknown>[]>;

/** Prepared SQLite statements kept by their text (a few fixed texts, and one per batch size of the batched ones). */
const STATEMENT_CACHE = 256;

/**
 * Transactions written once, as a generator that yields its statements: on PostgreSQL they run on one pooled
 * connection with awaits between them; on SQLite synchronously inside one better-sqlite3 transaction, because TypeORM
 * shares that one connection with every request, and a transaction held across an await would take in their
 * statements too. The one transaction mechanism of the outbox (OutboxStore), erasure (src/data-subject/) and the review of
 * held leads (LeadScreeningService).
 */
export class StepTransactions {
  readonly postgres: boolean;
  private readonly statements = new Map<string, Statement>();
  private statementsOf?: Database;

  constructor(private readonly dataSource: DataSource) {
    this.postgres = dataSource.options.type === 'postgres';
  }

  /** `$n` on PostgreSQL, `?` on SQLite. */
  p(n: number): string {
    return this.postgres ? `$${n}` : '?';
  }

  /** `IN (…)` placeholders for `count` values from parameter `first` on. */
  list(first: number, count: number): string {
    return Array.from({ length: count }, (_, i) => this.p(first + i)).join(', ');
  }

  /** One statement outside a transaction. */
  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const rows = await this.dataSource.query(sql, params);
    // TypeORM answers an UPDATE … RETURNING on PostgreSQL as [rows, count].
    return (this.postgres && Array.isArray(rows) && Array.isArray(rows[0]) ? rows[0] : rows) as T[];
  }

  async run<T>(steps: () => Steps<T>): Promise<T> {
    if (!this.postgres) {
      const db = this.sqlite();
      if (db.inTransaction) throw new Error('a transaction is already open on the SQLite connection');
      return db.transaction(() => {
        const run = steps();
        let next = run.next([]);
        while (!next.done) {
          const [sql, params] = next.value;
          const statement = this.prepared(db, sql);
          next = run.next(statement.reader ? (statement.all(params) as Record<string, unknown>[]) : (statement.run(params), []));
        }
        return next.value;
      })();
    }
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      const run = steps();
      let next = run.next([]);
      while (!next.done) {
        const [sql, params] = next.value;
        const result = (await runner.query(sql, params, true)) as { records: Record<string, unknown>[] };
        next = run.next(result.records ?? []);
      }
      await runner.commitTransaction();
      return next.value;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  /** The one SQLite connection TypeORM holds (SQLite only). */
  sqlite(): Database {
    return (this.dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
  }

  /**
   * The statement for `sql`, prepared once: preparing took as long as running the worker's statements (bench/webhooks.mjs,
   * bench/RESULTS.md). TypeORM keeps its own cache for dataSource.query; these run on the connection directly.
   */
  private prepared(db: Database, sql: string): Statement {
    if (this.statementsOf !== db) {
      this.statements.clear();
      this.statementsOf = db;
    }
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE) this.statements.clear();
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
