import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { NotificationPages } from './notification-pages.service.js';

/**
 * The public pages of the e-mails' links: confirm an address, unsubscribe one. No cookie and no script; the token is
 * the credential, in the query string or the form (never the path, which the request log records).
 */
@Controller('notifications')
@RateLimit('api')
export class NotificationPagesController {
  constructor(private readonly pages: NotificationPages) {}

  @Get('confirm')
  showConfirmation(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.pages.showConfirmation(req, res);
  }

  @Post('confirm')
  @HttpCode(200)
  confirm(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.pages.confirm(req, res);
  }

  @Get('unsubscribe')
  showUnsubscribe(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.pages.showUnsubscribe(req, res);
  }

  @Post('unsubscribe')
  @HttpCode(200)
  unsubscribe(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    return this.pages.unsubscribe(req, res);
  }
}
