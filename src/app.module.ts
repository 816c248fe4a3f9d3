import { DynamicModule, Inject, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_GUARD, APP_PIPE } from '@nestjs/core';
import { BearerGuard } from './auth/bearer.guard.js';
import { BodyGuard } from './body/body.guard.js';
import { BodyParserMiddleware } from './body/body-parser.middleware.js';
import { createValidationPipe } from './body/validation.pipe.js';
import { CliDownloadModule } from './cli-download/cli-download.module.js';
import { AppConfig } from './config/config.js';
import { APP_CONFIG, ConfigModule } from './config/config.module.js';
import { DataSubjectModule } from './data-subject/data-subject.module.js';
import { PrivacyModule } from './privacy/privacy.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DiscoveryModule } from './discovery/discovery.module.js';
import { DocsModule } from './docs/docs.module.js';
import { FormsModule } from './forms/forms.module.js';
import { GraphqlModule } from './graphql/graphql.module.js';
import { IdentityModule } from './identity/identity.module.js';
import { InboxModule } from './inbox/inbox.module.js';
import { LeadPagesModule } from './inbox/lead-pages.module.js';
import { SettingsModule } from './inbox/settings.module.js';
import { LeadsModule } from './leads/leads.module.js';
import { MailModule } from './mail/mail.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { MetaModule } from './meta/meta.module.js';
import { NotificationDigestModule } from './notifications/digest/notification-digest.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { ProblemModule } from './problem/problem.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { SandboxModule } from './sandbox/sandbox.module.js';
import { SecretsModule } from './secrets/secrets.module.js';
import { SiteModule } from './site/site.module.js';
import { TelemetryModule } from './telemetry/telemetry.module.js';
import { DeprecationMiddleware } from './versioning/deprecation.middleware.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        TelemetryModule,
        SecretsModule,
        ProblemModule,
        DatabaseModule.forRoot(config),
        RateLimitModule.forRoot(config),
        MailModule,
        SiteModule,
        DocsModule,
        MetaModule,
        LeadsModule,
        SandboxModule,
        OAuthModule,
        IdentityModule,
        DiscoveryModule,
        GraphqlModule,
        McpModule,
        CliDownloadModule,
        FormsModule,
        WebhooksModule,
        NotificationsModule,
        DataSubjectModule,
        PrivacyModule,
        NotificationDigestModule,
        InboxModule,
        LeadPagesModule,
        SettingsModule,
      ],
      providers: [
        // In this order: who is calling decides which rate-limit tier applies, and a caller refused by either gets
        // that answer whatever its body.
        { provide: APP_GUARD, useClass: BearerGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: BodyGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    // Without API_DEPRECATIONS the deprecation middleware would be a pass-through on every request.
    const deprecations = this.config.apiDeprecations.length > 0 ? [DeprecationMiddleware] : [];
    consumer.apply(...deprecations, BodyParserMiddleware).forRoutes('{*path}');
  }
}
