import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { LeadListQuery } from './lead-list-query.dto.js';
import type { LeadView } from './lead-reader.service.js';
import { LeadList, LeadsReadService } from './leads-read.service.js';

/**
 * Operators read stored leads. Listed last in LeadsModule's controllers, and `:id` declared last here: Express tries
 * routes in the order they were registered, so `leads/:id` must come after every literal `leads/<name>` route (export).
 */
@Controller('api/v1/leads')
export class LeadsReadController {
  constructor(private readonly reads: LeadsReadService) {}

  @Get()
  @RequireScopes('leads:read')
  @RateLimit('api')
  list(@Query() query: LeadListQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<LeadList> {
    return this.reads.list(query, req, res);
  }

  @Get(':id')
  @RequireScopes('leads:read')
  @RateLimit('api')
  get(@Param('id') id: string, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<LeadView> {
    return this.reads.get(id, req, res);
  }
}
