import { Controller, Get, Header, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { callerOf } from '../auth/caller.decorator.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { DataSubjectQueueQuery } from './data-subject-queue.query.js';
import { DataSubjectService, writeAccessPage } from './data-subject.service.js';

/** LGPD Art. 18 requests, made by an operator for the person (docs/decisions/0029-data-subject-requests.md). Personal data: no-store. */
@Controller('api/v1/data-subject-requests')
@RateLimit('api')
export class DataSubjectController {
  constructor(private readonly requests: DataSubjectService) {}

  @Get()
  @RequireScopes('leads:read')
  @Header('Cache-Control', 'no-store')
  queue(@Query() query: DataSubjectQueueQuery) {
    return this.requests.queue(query);
  }

  @Post('access')
  @RequireScopes('leads:read')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @Consumes('application/json')
  /** A page is read and audited first (a refusal is still a problem), then written in parts with turns between: hence @Res(). */
  async access(@Req() req: Request, @Res() res: Response): Promise<void> {
    await writeAccessPage(res, await this.requests.access(req.body as Record<string, unknown>, callerOf(req)));
  }

  @Post('erasure')
  @RequireScopes('leads:erase')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @Consumes('application/json')
  erase(@Req() req: Request) {
    return this.requests.erase(req.body as Record<string, unknown>, callerOf(req));
  }

  @Post('consent-revocation')
  @RequireScopes('leads:erase')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @Consumes('application/json')
  revoke(@Req() req: Request) {
    return this.requests.revoke(req.body as Record<string, unknown>, callerOf(req));
  }
}
