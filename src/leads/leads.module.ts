import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotencyService } from './idempotency.service.js';
import { Lead } from './lead.entity.js';
import { LeadValidationService } from './lead-validation.service.js';
import { LeadsController } from './leads.controller.js';
import { LeadsService } from './leads.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Lead, IdempotencyKey])],
  controllers: [LeadsController],
  providers: [LeadsService, LeadValidationService, IdempotencyService],
  exports: [LeadsService, LeadValidationService],
})
export class LeadsModule {}
