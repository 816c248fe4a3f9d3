import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { safeError } from '../logging/safe-error.js';
import { addCounts, ErasureCounts, LeadEraser, NO_ERASURE } from './lead-eraser.service.js';

const DAY_MS = 86_400_000;
/** How often each instance looks for expired leads, after the look at start. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * LEAD_RETENTION_DAYS (docs/decisions/0029-data-subject-requests.md): on every instance, at start and then hourly,
 * erases the leads received longer ago than that, batch by batch through the erasure path (`lead.erased`, reason
 * `retention`), with a turn of the event loop between batches. Instances share the work: each batch's leads are
 * locked SKIP LOCKED on PostgreSQL. Logs counts only.
 */
@Injectable()
export class LeadRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Retention');
  private readonly days: number | null;
  private timer?: NodeJS.Timeout;
  private running?: Promise<ErasureCounts>;
  private stopping = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly eraser: LeadEraser,
  ) {
    this.days = config.leadRetentionDays;
  }

  onApplicationBootstrap(): void {
    if (this.days === null) return;
    const tick = () =>
      void this.run().catch((error: unknown) => this.logger.warn({ error: safeError(error) }, 'Lead retention run failed; retrying at the next'));
    tick();
    this.timer = setInterval(tick, RETENTION_INTERVAL_MS).unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One run (or the run under way): erases every lead older than the retention period as of `now`. */
  run(now = Date.now()): Promise<ErasureCounts> {
    if (this.days === null) return Promise.resolve(NO_ERASURE);
    this.running ??= this.erase(new Date(now - this.days * DAY_MS)).finally(() => (this.running = undefined));
    return this.running;
  }

  private async erase(receivedBefore: Date): Promise<ErasureCounts> {
    let counts = NO_ERASURE;
    let batches = 0;
    while (!this.stopping) {
      const batch = await this.eraser.eraseBatch({ receivedBefore }, 'retention');
      if (batch.leadIds.length === 0) break;
      counts = addCounts(counts, batch.counts);
      batches++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (counts.leads) {
      const scrubbed = await this.eraser.scrub();
      this.logger.log({ ...counts, batches, retention_days: this.days, scrubbed }, 'Erased leads past the retention period');
    }
    return counts;
  }
}
