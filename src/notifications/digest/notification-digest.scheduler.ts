import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { LeadReader } from '../../leads/lead-reader.service.js';
import { safeError } from '../../logging/safe-error.js';
import { PeriodicJob } from '../../time/periodic-job.js';
import { Outbox } from '../../outbox/outbox.service.js';
import { NotificationRecipientsStore } from '../notification-recipients.store.js';
import { DigestDay, digestDayAt } from './digest-day.js';
import { DIGEST_BATCH, NotificationDigestStore } from './notification-digest.store.js';

export const DIGEST_EVENT = 'notification.digest';

/** How often each instance looks at its clock: a digest leaves within this of NOTIFY_DIGEST_AT. */
export const DIGEST_TICK_MS = 60_000;

/** A digest message's data: the day and its window, no personal data (the composer reads the leads at send time). */
export interface DigestData {
  day: string;
  since: string;
  until: string;
}

/**
 * The daily digest (issue 34): from NOTIFY_DIGEST_AT on the TIME_ZONE clock until that day ends, every instance looks
 * once a minute whether today's digest (about yesterday) is written; the first to claim a recipient's (day, recipient)
 * row in notification_digests writes that recipient's `notification.digest` message in the same transaction, so each
 * confirmed daily-digest recipient gets one per day whatever the instances and restarts. A service down at the time
 * sends it when it starts again that day. Nothing is written on a day with nothing to say (no accepted lead that day
 * and none awaiting review).
 */
@Injectable()
export class NotificationDigestScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Digest');
  private readonly job = new PeriodicJob<number>(DIGEST_TICK_MS, (error) =>
    this.logger.warn({ error: safeError(error) }, 'Daily digest failed; retrying at the next tick'),
  );
  /** The last day this instance finished: after that, a tick is a clock reading only. */
  private doneDay?: string;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: NotificationDigestStore,
    private readonly outbox: Outbox,
    private readonly reader: LeadReader,
    private readonly recipients: NotificationRecipientsStore,
  ) {}

  onApplicationBootstrap(): void {
    this.job.start(() => this.tick());
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** One look at the clock as of `now`: writes the digests due and not yet written; returns how many this call wrote. */
  tick(now = Date.now()): Promise<number> {
    const due = digestDayAt(now, this.config.timeZone, this.config.notifyDigestAt);
    if (now < due.dueAt || this.doneDay === due.day) return Promise.resolve(0);
    return this.job.once(() => this.write(due, now));
  }

  private async write(due: DigestDay, now: number): Promise<number> {
    const accepted = await this.reader.count({ screening: 'accepted', since: due.since, until: due.until });
    const awaitingReview = accepted > 0 ? 0 : await this.reader.heldCount({});
    let written = 0;
    if (accepted > 0 || awaitingReview > 0) {
      const data: DigestData = { day: due.day, since: due.since.toISOString(), until: due.until.toISOString() };
      // In keyset batches of recipients, each in its own transaction, with a turn of the event loop between them.
      for (let after = ''; !this.job.stopping;) {
        const batch = await this.store.transactions.run(() => this.claimAndPublish(due.day, data, after, now));
        written += batch.claimed;
        if (batch.claimed) this.outbox.wake();
        if (batch.last === undefined) break;
        after = batch.last;
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (written) this.logger.log({ day: due.day, recipients: written, leads: accepted }, 'Daily digest written');
      else this.logger.debug({ day: due.day }, 'Daily digest already written for every recipient');
    } else {
      this.logger.debug({ day: due.day }, 'Daily digest: nothing to say');
    }
    if (!this.job.stopping) {
      this.doneDay = due.day;
      await this.store.prune(due.day);
    }
    return written;
  }

  private *claimAndPublish(day: string, data: DigestData, after: string, now: number) {
    const batch = yield* this.recipients.digestRecipients(after, DIGEST_BATCH);
    const claimed = yield* this.store.claim(day, batch, now);
    for (const recipientId of claimed) yield* this.outbox.publish(DIGEST_EVENT, data, now, recipientId);
    return { claimed: claimed.length, last: batch.length === DIGEST_BATCH ? batch[batch.length - 1] : undefined };
  }
}
