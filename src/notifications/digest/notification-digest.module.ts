import { Module } from '@nestjs/common';
import { LeadsModule } from '../../leads/leads.module.js';
import { OutboxModule } from '../../outbox/outbox.module.js';
import { NotificationsModule } from '../notifications.module.js';
import { NotificationDigestComposer } from './notification-digest.composer.js';
import { NotificationDigestScheduler } from './notification-digest.scheduler.js';
import { NotificationDigestStore } from './notification-digest.store.js';

/**
 * The daily digest: its schedule (each digest written by one instance, in notification_digests) and its composer,
 * registered with the e-mail channel's MailComposers. MAIL_TEMPLATES comes from the global MailModule.
 */
@Module({
  imports: [LeadsModule, OutboxModule, NotificationsModule],
  providers: [NotificationDigestStore, NotificationDigestScheduler, NotificationDigestComposer],
})
export class NotificationDigestModule {}
