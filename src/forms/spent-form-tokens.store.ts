import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { safeError } from '../logging/safe-error.js';
import { PeriodicJob } from '../time/periodic-job.js';

/** Rows deleted per statement: one short transaction each, the event loop free between them (decision 0032's size). */
export const SPENT_PURGE_BATCH = 100;
/** How often each instance purges, after the purge at start: rows outlive their token by at most this. */
export const SPENT_PURGE_INTERVAL_MS = 15 * 60_000;

/**
 * The one home of `form_tokens_spent`'s SQL: which form tokens were already redeemed, by the SHA-256 of their nonce, on
 * every instance alike. The database decides which of two redemptions of one token comes first (the primary key), never
 * this process's memory. Expired rows are purged at start and then every SPENT_PURGE_INTERVAL_MS, in small batches;
 * on PostgreSQL SKIP LOCKED lets instances share the work. Logs counts only.
 */
@Injectable()
export class SpentFormTokens implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('SpentFormTokens');
  private readonly spendSql: string;
  private readonly purgeSql: string;
  private readonly postgres: boolean;
  private readonly job = new PeriodicJob<number>(SPENT_PURGE_INTERVAL_MS, (error) =>
    this.logger.warn({ error: safeError(error) }, 'Spent form token purge failed; retrying at the next'),
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.postgres = dataSource.options.type === 'postgres';
    const p = (n: number) => (this.postgres ? `$${n}` : '?');
    this.spendSql = `INSERT INTO form_tokens_spent (nonce_hash, expires_at) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (nonce_hash) DO NOTHING RETURNING nonce_hash`;
    this.purgeSql =
      `DELETE FROM form_tokens_spent WHERE nonce_hash IN (SELECT nonce_hash FROM form_tokens_spent WHERE expires_at < ${p(1)} ` +
      `ORDER BY expires_at LIMIT ${SPENT_PURGE_BATCH}${this.postgres ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING nonce_hash`;
  }

  /** Marks a token's nonce spent; true when this call spent it, false when it was spent before (here or elsewhere). */
  async spend(nonceHash: string, expiresAtMs: number): Promise<boolean> {
    const rows = (await this.dataSource.query(this.spendSql, [nonceHash, expiresAtMs])) as unknown[];
    return rows.length === 1;
  }

  onApplicationBootstrap(): void {
    this.job.start(() => this.purge());
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** One purge (or the one under way): deletes every row expired as of `now`; answers how many. */
  purge(now = Date.now()): Promise<number> {
    return this.job.once(() => this.purgeBatches(now));
  }

  private async purgeBatches(now: number): Promise<number> {
    let purged = 0;
    while (!this.job.stopping) {
      const result = (await this.dataSource.query(this.purgeSql, [now])) as unknown[];
      // TypeORM answers a DELETE … RETURNING on PostgreSQL as [rows, count].
      const deleted = this.postgres ? (result[1] as number) : result.length;
      purged += deleted;
      if (deleted < SPENT_PURGE_BATCH) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (purged) this.logger.log({ formTokens: purged }, 'Purged expired spent form tokens');
    return purged;
  }
}
