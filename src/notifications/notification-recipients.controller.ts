import { Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { RecipientDeliveriesQuery, RecipientListQuery } from './notification-queries.dto.js';
import { NotificationRecipientsService } from './notification-recipients.service.js';

/** Operators choose who is told of new leads by e-mail (docs/decisions/0036-notification-recipients.md). */
@Controller('api/v1/notification-recipients')
@RequireScopes('notifications:manage')
@RateLimit('api')
export class NotificationRecipientsController {
  constructor(private readonly recipients: NotificationRecipientsService) {}

  @Post()
  @Header('Cache-Control', 'no-store')
  @HttpCode(201)
  @Consumes('application/json')
  create(@Req() req: Request) {
    return this.recipients.create(req.body as Record<string, unknown>);
  }

  @Get()
  @Header('Cache-Control', 'no-store')
  list(@Query() query: RecipientListQuery) {
    return this.recipients.list(query);
  }

  @Get(':id')
  @Header('Cache-Control', 'no-store')
  get(@Param('id') id: string) {
    return this.recipients.get(id);
  }

  @Patch(':id')
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  update(@Param('id') id: string, @Req() req: Request) {
    return this.recipients.update(id, req.body as Record<string, unknown>);
  }

  @Delete(':id')
  @Header('Cache-Control', 'no-store')
  @HttpCode(204)
  remove(@Param('id') id: string): Promise<void> {
    return this.recipients.remove(id);
  }

  @Post(':id/test')
  @Header('Cache-Control', 'no-store')
  @HttpCode(202)
  test(@Param('id') id: string) {
    return this.recipients.test(id);
  }

  @Get(':id/deliveries')
  @Header('Cache-Control', 'no-store')
  deliveries(@Param('id') id: string, @Query() query: RecipientDeliveriesQuery) {
    return this.recipients.deliveries(id, query);
  }

  @Post(':id/resend-confirmation')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  resendConfirmation(@Param('id') id: string) {
    return this.recipients.resendConfirmation(id);
  }
}
