import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { safeError } from '../logging/safe-error.js';
import { PeriodicJob } from '../time/periodic-job.js';
import { AgentRegistration } from './agent-registration.entity.js';

/** Registrations deleted per statement: one short transaction each, the event loop free between them. */
export const PURGE_BATCH = 100;
/** How often each instance purges, after the purge at start. */
export const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Deletes the agent registrations whose claim token, identity assertions (and the access tokens they give) and refresh
 * tokens have all expired (`expires_at`), with their refresh tokens and address index rows (ON DELETE CASCADE); leads
 * keep the `registration_id` they were sent with, a plain value. On every instance, at start and then hourly, one
 * DELETE of at most PURGE_BATCH rows at a time; on PostgreSQL the rows are locked SKIP LOCKED, so instances share the
 * work rather than wait on each other (docs/decisions/0032-agent-registration-addresses-and-purge.md). Logs counts only.
 */
@Injectable()
export class RegistrationPurge implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RegistrationPurge');
  private readonly sql: string;
  private readonly job = new PeriodicJob<number>(PURGE_INTERVAL_MS, (error) =>
    this.logger.warn({ error: safeError(error) }, 'Registration purge failed; retrying at the next'),
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    const pg = dataSource.options.type === 'postgres';
    this.sql =
      `DELETE FROM agent_registrations WHERE id IN (SELECT id FROM agent_registrations WHERE expires_at < ${pg ? '$1' : '?'} ` +
      `ORDER BY expires_at LIMIT ${PURGE_BATCH}${pg ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING id`;
  }

  onApplicationBootstrap(): void {
    this.job.start(() => this.run());
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** One run (or the run under way): deletes every registration expired as of `now`; answers how many. */
  run(now = new Date()): Promise<number> {
    return this.job.once(() => this.purge(now));
  }

  private async purge(now: Date): Promise<number> {
    const column = this.dataSource.getMetadata(AgentRegistration).findColumnWithPropertyName('expiresAt')!;
    const before = this.dataSource.driver.preparePersistentValue(now, column);
    let purged = 0;
    while (!this.job.stopping) {
      const result = (await this.dataSource.query(this.sql, [before])) as unknown[];
      // TypeORM answers a DELETE … RETURNING on PostgreSQL as [rows, count].
      const deleted = this.dataSource.options.type === 'postgres' ? (result[1] as number) : result.length;
      purged += deleted;
      if (deleted < PURGE_BATCH) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (purged) this.logger.log({ registrations: purged }, 'Purged expired agent registrations');
    return purged;
  }
}
