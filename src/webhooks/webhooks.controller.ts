import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { RequireScopes } from '../auth/bearer.guard.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { DeliveriesQuery } from './webhook-deliveries-query.dto.js';
import { WebhooksService } from './webhooks.service.js';

/** Operators manage where leads are delivered (docs/decisions/0027-webhooks-outbox.md). URLs may hold tokens: no-store. */
@Controller('api/v1/webhooks')
@RequireScopes('webhooks:manage')
@RateLimit('api')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Header('Cache-Control', 'no-store')
  @HttpCode(201)
  @Consumes('application/json')
  create(@Req() req: Request) {
    return this.webhooks.create(req.body as Record<string, unknown>);
  }

  @Get()
  @Header('Cache-Control', 'no-store')
  list() {
    return this.webhooks.list();
  }

  @Get(':id')
  @Header('Cache-Control', 'no-store')
  get(@Param('id') id: string) {
    return this.webhooks.get(id);
  }

  @Patch(':id')
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  update(@Param('id') id: string, @Req() req: Request) {
    return this.webhooks.update(id, req.body as Record<string, unknown>);
  }

  @Delete(':id')
  @Header('Cache-Control', 'no-store')
  @HttpCode(204)
  remove(@Param('id') id: string): Promise<void> {
    return this.webhooks.remove(id);
  }

  @Post(':id/rotate-secret')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  rotateSecret(@Param('id') id: string) {
    return this.webhooks.rotateSecret(id);
  }

  @Post(':id/test')
  @Header('Cache-Control', 'no-store')
  @HttpCode(202)
  test(@Param('id') id: string) {
    return this.webhooks.test(id);
  }

  @Get(':id/deliveries')
  @Header('Cache-Control', 'no-store')
  deliveries(@Param('id') id: string, @Query() query: DeliveriesQuery) {
    return this.webhooks.deliveries(id, query);
  }

  @Post(':id/replay')
  @Header('Cache-Control', 'no-store')
  @HttpCode(202)
  @Consumes('application/json')
  replay(@Param('id') id: string, @Body() body: Record<string, unknown>) {
    return this.webhooks.replay(id, body);
  }
}
