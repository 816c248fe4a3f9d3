import { Module } from '@nestjs/common';
import { DataSubjectModule } from '../data-subject/data-subject.module.js';
import { LeadsModule } from '../leads/leads.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ScreeningModule } from '../screening/screening.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { PrivacyPagesController } from './privacy-pages.controller.js';
import { PrivacyPages } from './privacy-pages.service.js';
import { PrivacyController } from './privacy.controller.js';
import { PrivacyRequestsService } from './privacy-requests.service.js';

/** A person's own data-subject requests (issue 36; docs/decisions/0040-self-service-privacy-requests.md). */
@Module({
  imports: [DataSubjectModule, VerificationModule, LeadsModule, ScreeningModule, WebhooksModule, NotificationsModule],
  controllers: [PrivacyController, PrivacyPagesController],
  providers: [PrivacyRequestsService, PrivacyPages],
})
export class PrivacyModule {}
