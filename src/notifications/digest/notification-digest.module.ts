import { Module } from '@nestjs/common';
import { LeadsModule } from '../../leads/leads.module.js';
import { OutboxModule } from '../../outbox/outbox.module.js';
import { NotificationDigestStore } from './notification-digest.store.js';
import { NotificationDigestScheduler } from './notification-digest.scheduler.js';

/**
 * The daily digest's schedule (one instance writes each digest). Its composer (NotificationDigestComposer) is provided
 * where the e-mail channel's MailComposers and the MailModule's templates are.
 */
@Module({
  imports: [LeadsModule, OutboxModule],
  providers: [NotificationDigestStore, NotificationDigestScheduler],
  exports: [NotificationDigestScheduler],
})
export class NotificationDigestModule {}
