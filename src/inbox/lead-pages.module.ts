import { Module } from '@nestjs/common';
import { DataSubjectModule } from '../data-subject/data-subject.module.js';
import { LeadsModule } from '../leads/leads.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { OutboxModule } from '../outbox/outbox.module.js';
import { InboxModule } from './inbox.module.js';
import { LeadPagesController } from './lead-pages.controller.js';
import { LeadPages } from './lead-pages.service.js';
import { LeadPagesView } from './lead-pages.view.js';

/** The inbox's lead pages (issue 35), on the inbox's shell and the services of the API. */
@Module({
  imports: [InboxModule, LeadsModule, DataSubjectModule, OutboxModule, NotificationsModule],
  controllers: [LeadPagesController],
  providers: [LeadPages, LeadPagesView],
})
export class LeadPagesModule {}
