import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { PrivacyPages } from './privacy-pages.service.js';

/** `/privacy`: a person's own requests as pages, pt-BR and English, forms with no cookie and no script of ours. */
@Controller('privacy')
@RateLimit('api')
export class PrivacyPagesController {
  constructor(private readonly pages: PrivacyPages) {}

  @Get()
  show(@Req() req: Request, @Res() res: Response): void {
    this.pages.show(req, res);
  }

  @Post()
  start(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pages.start(req, res);
  }

  @Post('requests/:id/verify')
  verify(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pages.verify(id, req, res);
  }

  @Post('requests/:id/download')
  download(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pages.download(id, req, res);
  }
}
