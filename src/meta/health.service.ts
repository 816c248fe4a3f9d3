import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { serviceUnavailable } from '../problem/app-error.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { Outbox } from '../outbox/outbox.service.js';
import { within } from '../time/within.js';

export type CheckState = 'up' | 'down';

/** Why an instance that still serves is degraded (docs/decisions/0042-observability.md). */
export type DegradedReason = 'database_down' | 'redis_down' | 'outbox_backlog';

export interface ChannelBacklog {
  pending: number;
  oldest_pending_age_seconds: number | null;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  /** Present when degraded: each reason once. */
  reasons?: DegradedReason[];
  version: string;
  checks: { database: CheckState } & Record<string, CheckState>;
  /** Per channel, the pending deliveries of enabled subscribers; null when the database cannot tell in time. */
  outbox: Record<string, ChannelBacklog> | null;
  /** Every delivery and unsent message waiting (kept from before channels); null when the database cannot tell. */
  webhooks: ChannelBacklog | null;
}

/** A health probe must answer quickly even when the database hangs. */
const CHECK_TIMEOUT_MS = 2000;

@Injectable()
export class HealthService {
  private readonly degradedAfterMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly rateLimits: RateLimitStore,
    private readonly outbox: Outbox,
  ) {
    this.degradedAfterMs = config.observability.outboxDegradedAfterMs;
  }

  /**
   * The database is required; Redis, when configured, is not: without it limits are per instance. Degraded (still
   * served) when Redis is down or deliveries wait longer than OUTBOX_DEGRADED_AFTER: one receiver down is enough.
   */
  async report(): Promise<HealthReport> {
    const reasons: DegradedReason[] = [];
    let outbox: HealthReport['outbox'] = null;
    let webhooks: HealthReport['webhooks'] = null;
    const database = await this.probe(() => this.dataSource.query('SELECT 1'));
    // Apart from the probe, with its own time: a long backlog that is slow to count must not make the database look down.
    if (database === 'up') {
      await this.probe(async () => {
        const now = Date.now();
        const backlog = await this.outbox.backlog();
        const age = (oldest: number | null) => (oldest === null ? null : Math.max(0, Math.round((now - oldest) / 1000)));
        const channels: Record<string, ChannelBacklog> = {};
        for (const [channel, { pending, oldest }] of Object.entries(backlog.channels)) channels[channel] = { pending, oldest_pending_age_seconds: age(oldest) };
        const waiting = [...Object.values(backlog.channels), backlog.undispatched];
        const oldest = waiting.map((entry) => entry.oldest).filter((time) => time !== null);
        outbox = channels;
        webhooks = {
          pending: waiting.reduce((sum, entry) => sum + entry.pending, 0),
          oldest_pending_age_seconds: oldest.length ? age(Math.min(...oldest)) : null,
        };
        if (oldest.some((time) => now - time > this.degradedAfterMs)) reasons.push('outbox_backlog');
      });
    }
    const checks: HealthReport['checks'] = { database };
    if (database === 'down') reasons.unshift('database_down');
    const redis = this.rateLimits.redisState();
    if (redis) checks.redis = redis;
    if (redis === 'down') reasons.push('redis_down');
    const report: HealthReport = { status: reasons.length ? 'degraded' : 'ok', version: this.config.version, checks, outbox, webhooks };
    if (reasons.length) report.reasons = reasons;
    return report;
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
    try {
      await within(check(), CHECK_TIMEOUT_MS, 'health check');
      return 'up';
    } catch {
      return 'down';
    }
  }
}
