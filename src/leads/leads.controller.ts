import { Controller, HttpCode, Post } from '@nestjs/common';
import { CallerScope } from '../http/caller.js';
import { JsonBody } from '../http/json-body.js';
import { IdempotencyKeyHeader } from './idempotency-key.header.js';
import { LeadReceipt, LeadsService } from './leads.service.js';

@Controller('api/v1')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @Post('lead')
  @HttpCode(201)
  create(
    @JsonBody() body: Record<string, unknown>,
    @CallerScope() caller: string,
    @IdempotencyKeyHeader() idempotencyKey?: string,
  ): Promise<LeadReceipt> {
    return this.leads.create(body, caller, idempotencyKey);
  }
}
