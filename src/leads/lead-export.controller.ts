import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { LeadExportQuery } from './lead-export.query.js';
import { LeadExportService } from './lead-export.service.js';

@Controller('api/v1')
export class LeadExportController {
  constructor(private readonly exports: LeadExportService) {}

  /** The response is streamed by the service (pipeline with back-pressure), hence @Res(). */
  @Get('leads/export')
  @RequireScopes('leads:export')
  @RateLimit('api')
  export(@Query() query: LeadExportQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.exports.export(query, req, res);
  }
}
