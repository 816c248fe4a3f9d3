import { Controller, Get, Header, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Consumes } from '../body/body.guard.js';
import { writeAccessPage } from '../data-subject/data-subject.service.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { PrivacyDataQuery } from './privacy-data.query.js';
import { PrivacyRequestsService } from './privacy-requests.service.js';

/** A person's own LGPD requests, anonymous, verified by a code sent to the address (docs/decisions/0040). Personal data: no-store. */
@Controller('api/v1/privacy/requests')
@RateLimit('api')
export class PrivacyController {
  constructor(private readonly requests: PrivacyRequestsService) {}

  @Post()
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  create(@Req() req: Request) {
    return this.requests.create(req.body as Record<string, unknown>, req);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  /** An access answer can hold 500 leads: written in parts, as the operators' access page is (hence @Res()). */
  async verify(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const result = await this.requests.verify(id, req.body as Record<string, unknown>);
    if ('data' in result) return writeAccessPage(res, result);
    res.json(result);
  }

  @Get(':id/data')
  @Header('Cache-Control', 'no-store')
  async data(@Param('id') id: string, @Query() query: PrivacyDataQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    const page = await this.requests.data(id, query, req, res);
    if (page) await writeAccessPage(res, page);
  }
}
