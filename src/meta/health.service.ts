import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { serviceUnavailable } from '../problem/app-error.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { OutboxStore } from '../outbox/outbox-store.js';

export type CheckState = 'up' | 'down';

export interface HealthReport {
  status: 'ok' | 'degraded';
  version: string;
  checks: { database: CheckState } & Record<string, CheckState>;
  /** The delivery backlog; null when the database cannot tell. */
  webhooks: { pending: number; oldest_pending_age_seconds: number | null } | null;
}

/** A health probe must answer quickly even when the database hangs. */
const CHECK_TIMEOUT_MS = 2000;

@Injectable()
export class HealthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly rateLimits: RateLimitStore,
    private readonly outboxStore: OutboxStore,
  ) {}

  /** The database is required; Redis, when configured, is not: without it limits are per instance and health is degraded. */
  async report(): Promise<HealthReport> {
    let webhooks: HealthReport['webhooks'] = null;
    const database = await this.probe(async () => {
      await this.dataSource.query('SELECT 1');
      const backlog = await this.outboxStore.backlog(Date.now());
      webhooks = { pending: backlog.pending, oldest_pending_age_seconds: backlog.oldestPendingAgeSeconds };
    });
    const checks: HealthReport['checks'] = { database };
    const redis = this.rateLimits.redisState();
    if (redis) checks.redis = redis;
    const status = Object.values(checks).every((state) => state === 'up') ? 'ok' : 'degraded';
    return { status, version: this.config.version, checks, webhooks };
  }

  /** GET /health: 200 with the report, or 503 (a problem carrying the report) when a required dependency is down. */
  async check(): Promise<HealthReport> {
    const report = await this.report();
    if (report.checks.database === 'down') {
      throw serviceUnavailable('The database is down; leads cannot be stored.', { health: report });
    }
    return report;
  }

  private async probe(check: () => Promise<unknown>): Promise<CheckState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('health check timed out')), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), timeout]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}
