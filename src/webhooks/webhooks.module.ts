import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LeadsModule } from '../leads/leads.module.js';
import { WebhookDispatcher } from './webhook-dispatcher.service.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookHttpClient } from './webhook-http.js';
import { WebhookMessage } from './webhook-message.entity.js';
import { WebhookStore } from './webhook-store.js';
import { WEBHOOK_HTTP_CLIENT, WebhookResolver } from './webhook-tokens.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([WebhookEndpoint, WebhookMessage]), LeadsModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookStore,
    WebhookDispatcher,
    WebhookResolver,
    {
      provide: WEBHOOK_HTTP_CLIENT,
      inject: [APP_CONFIG, WebhookResolver],
      useFactory: (config: AppConfig, resolver: WebhookResolver) =>
        new WebhookHttpClient({
          allowPrivate: config.webhooks.allowPrivate,
          resolver: (host) => resolver.resolve(host),
          userAgent: `leads-service/${config.version} (webhooks)`,
        }),
    },
  ],
  // The store answers health's backlog question; erasure (src/data-subject/) removes a lead's messages through it, and
  // wakes the dispatcher for the events it writes.
  exports: [WebhookStore, WebhookDispatcher],
})
export class WebhooksModule {}
