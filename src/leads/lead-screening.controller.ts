import { Body, Controller, Header, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import type { LeadView } from './lead-reader.service.js';
import { LeadScreeningService } from './lead-screening.service.js';

/** Operators review held leads: release them or mark them spam (scope leads:screen, which agents never hold). */
@Controller('api/v1/leads')
export class LeadScreeningController {
  constructor(private readonly screening: LeadScreeningService) {}

  @Post(':id/screening')
  @RequireScopes('leads:screen')
  @RateLimit('api')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @Consumes('application/json')
  decide(@Param('id') id: string, @Body() body: Record<string, unknown>, @Req() req: Request): Promise<LeadView> {
    return this.screening.decide(id, body, req);
  }
}
