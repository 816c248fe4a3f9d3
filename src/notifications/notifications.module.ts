import { Module, OnModuleInit } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module.js';
import { Outbox } from '../outbox/outbox.service.js';
import { EmailChannel } from './email-channel.js';
import { MailComposers } from './mail-composers.js';
import { ConfirmationComposer, LeadNotificationComposer, TestComposer } from './notification-composers.js';
import { NotificationPagesController } from './notification-pages.controller.js';
import { NotificationPages } from './notification-pages.service.js';
import { NotificationRecipientsController } from './notification-recipients.controller.js';
import { NotificationRecipientsService } from './notification-recipients.service.js';
import { NotificationRecipientsStore } from './notification-recipients.store.js';
import { RecipientLinks } from './recipient-links.js';

/**
 * Lead notifications by e-mail (docs/decisions/0036-notification-recipients.md): the recipients (the e-mail channel's
 * subscribers), their confirmation and unsubscribe pages, and the channel itself, plugged into the outbox. MAILER and
 * MAIL_TEMPLATES come from the global MailModule (src/mail/). MailComposers is exported for the parts that write other
 * e-mails of the channel (the digest).
 */
@Module({
  imports: [OutboxModule],
  controllers: [NotificationRecipientsController, NotificationPagesController],
  providers: [
    NotificationRecipientsStore,
    NotificationRecipientsService,
    NotificationPages,
    RecipientLinks,
    EmailChannel,
    MailComposers,
    LeadNotificationComposer,
    ConfirmationComposer,
    TestComposer,
  ],
  exports: [MailComposers, NotificationRecipientsStore, NotificationRecipientsService, RecipientLinks],
})
export class NotificationsModule implements OnModuleInit {
  constructor(
    private readonly outbox: Outbox,
    private readonly channel: EmailChannel,
    private readonly composers: MailComposers,
    private readonly lead: LeadNotificationComposer,
    private readonly confirmation: ConfirmationComposer,
    private readonly test: TestComposer,
  ) {}

  onModuleInit(): void {
    for (const composer of [this.lead, this.confirmation, this.test]) this.composers.register(composer);
    this.outbox.register(this.channel);
  }
}
