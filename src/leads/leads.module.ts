import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyService } from './idempotency.service.js';
import { ConsentText } from './consent-text.entity.js';
import { Lead } from './lead.entity.js';
import { LeadReader } from './lead-reader.service.js';
import { LeadValidationService } from './lead-validation.service.js';
import { LeadWriter } from './lead-writer.service.js';
import { LeadExportController } from './lead-export.controller.js';
import { LeadExportReader } from './lead-export.reader.js';
import { LeadExportService } from './lead-export.service.js';
import { LeadScreeningController } from './lead-screening.controller.js';
import { LeadScreeningService } from './lead-screening.service.js';
import { LeadsController } from './leads.controller.js';
import { LeadsReadController } from './leads-read.controller.js';
import { LeadsReadService } from './leads-read.service.js';
import { LeadsService } from './leads.service.js';
import { ScreeningModule } from '../screening/screening.module.js';

@Module({
  imports: [TypeOrmModule.forFeature([Lead, IdempotencyKey, ConsentText]), ScreeningModule],
  // LeadsReadController last: its GET leads/:id must not take a literal route such as leads/export (see there).
  controllers: [LeadsController, LeadExportController, LeadScreeningController, LeadsReadController],
  providers: [
    LeadsService,
    LeadValidationService,
    LeadWriter,
    LeadReader,
    LeadsReadService,
    LeadExportReader,
    LeadExportService,
    IdempotencyService,
    LeadScreeningService,
  ],
  // LeadWriter: other modules add their rows to the transaction that stores a lead (LeadWriter.alsoWrite). LeadReader:
  // the one read path of every surface (REST, GraphQL, MCP, export). LeadScreeningService: other modules add their rows to
  // the transaction that first releases a held lead (LeadScreeningService.onRelease). LeadExportService: the inbox's
  // export button streams through it.
  exports: [LeadsService, LeadValidationService, LeadWriter, LeadReader, LeadScreeningService, LeadExportService],
})
export class LeadsModule {}
