import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { safeError } from '../logging/safe-error.js';
import { PeriodicJob } from '../time/periodic-job.js';
import { addCounts, ErasureCounts, ErasureSelection, LeadEraser, NO_ERASURE } from './lead-eraser.service.js';

const DAY_MS = 86_400_000;
/** How often each instance looks for expired leads, after the look at start. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * LEAD_RETENTION_DAYS (docs/decisions/0029-data-subject-requests.md) and SPAM_RETENTION_DAYS (0033-screening.md): on
 * every instance, at start and then hourly, erases the spam leads received longer ago than the spam period, and every
 * lead (held and accepted alike) received longer ago than the lead period, batch by batch through the erasure path
 * (`lead.erased`, reason `retention`), with a turn of the event loop between batches. Instances share the work: each batch's leads are
 * locked SKIP LOCKED on PostgreSQL. Logs counts only.
 */
@Injectable()
export class LeadRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Retention');
  private readonly days: number | null;
  private readonly spamDays: number;
  private readonly job = new PeriodicJob<ErasureCounts>(RETENTION_INTERVAL_MS, (error) =>
    this.logger.warn({ error: safeError(error) }, 'Lead retention run failed; retrying at the next'),
  );

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly eraser: LeadEraser,
  ) {
    this.days = config.leadRetentionDays;
    this.spamDays = config.spamRetentionDays;
  }

  onApplicationBootstrap(): void {
    this.job.start(() => this.run());
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** One run (or the run under way): erases every spam lead, then every lead, older than its retention period as of `now`. */
  run(now = Date.now()): Promise<ErasureCounts> {
    return this.job.once(() => this.erase(now));
  }

  private async erase(now: number): Promise<ErasureCounts> {
    const spam = await this.eraseAll({ receivedBefore: new Date(now - this.spamDays * DAY_MS), verdict: 'spam' });
    if (this.days === null) return spam;
    return addCounts(spam, await this.eraseAll({ receivedBefore: new Date(now - this.days * DAY_MS) }));
  }

  private async eraseAll(selection: Extract<ErasureSelection, { receivedBefore: Date }>): Promise<ErasureCounts> {
    let counts = NO_ERASURE;
    let batches = 0;
    while (!this.job.stopping) {
      const batch = await this.eraser.eraseBatch(selection, 'retention');
      if (batch.leadIds.length === 0) break;
      counts = addCounts(counts, batch.counts);
      batches++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (counts.leads) {
      const scrubbed = await this.eraser.scrub();
      const spam = selection.verdict === 'spam';
      this.logger.log(
        { ...counts, batches, retention_days: spam ? this.spamDays : this.days, verdict: selection.verdict ?? 'any', scrubbed },
        spam ? 'Erased spam leads past the spam retention period' : 'Erased leads past the retention period',
      );
    }
    return counts;
  }
}
