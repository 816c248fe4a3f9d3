import { Module } from '@nestjs/common';
import { LeadsModule } from '../leads/leads.module.js';
import { OutboxModule } from '../outbox/outbox.module.js';
import { DataSubjectController } from './data-subject.controller.js';
import { DataSubjectRequestsStore } from './data-subject-requests.store.js';
import { DataSubjectService } from './data-subject.service.js';
import { LeadEraser } from './lead-eraser.service.js';
import { LeadRetention } from './lead-retention.service.js';

/** Data-subject requests and lead retention (docs/decisions/0029-data-subject-requests.md). */
@Module({
  imports: [LeadsModule, OutboxModule],
  controllers: [DataSubjectController],
  providers: [DataSubjectService, DataSubjectRequestsStore, LeadEraser, LeadRetention],
  // The inbox's lead page makes the same requests for a person (src/inbox/).
  exports: [DataSubjectService, DataSubjectRequestsStore],
})
export class DataSubjectModule {}
