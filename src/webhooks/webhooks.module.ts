import { Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OutboxModule } from '../outbox/outbox.module.js';
import { WebhookChannel } from './webhook-channel.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookHttpClient } from './webhook-http.js';
import { WEBHOOK_HTTP_CLIENT, WebhookResolver } from './webhook-tokens.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([WebhookEndpoint]), OutboxModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookChannel,
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
  exports: [WebhooksService],
})
export class WebhooksModule implements OnModuleInit {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The guard off is never silent: every start says so (config.ts refuses it in production unless accepted). */
  onModuleInit(): void {
    if (!this.config.webhooks.allowPrivate) return;
    new Logger('Webhooks').warn(
      'WEBHOOKS_ALLOW_PRIVATE=true: webhook deliveries may go to http URLs and to private and loopback addresses (the SSRF guard is off); for development and tests only',
    );
  }
}
