import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { Caller, CurrentCaller } from '../auth/caller.decorator.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { Consumes } from '../body/body.guard.js';
import { IdempotencyKeyHeader } from './idempotency-key.header.js';
import { LeadReceipt, LeadsService } from './leads.service.js';

@Controller('api/v1')
@OptionalBearer()
@RateLimit('api')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @Post('lead')
  @HttpCode(201)
  @Consumes('application/json')
  create(
    @Body() body: Record<string, unknown>,
    @CurrentCaller() caller: Caller,
    @IdempotencyKeyHeader() idempotencyKey?: string,
  ): Promise<LeadReceipt> {
    return this.leads.create(body, caller, idempotencyKey);
  }
}
