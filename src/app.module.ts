import { DynamicModule, Inject, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { BearerGuard } from './auth/bearer.guard.js';
import { CliDownloadModule } from './cli-download/cli-download.module.js';
import { AppConfig } from './config/config.js';
import { APP_CONFIG, ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DiscoveryModule } from './discovery/discovery.module.js';
import { DocsModule } from './docs/docs.module.js';
import { FormsModule } from './forms/forms.module.js';
import { RawBodyMiddleware } from './body/raw-body.middleware.js';
import { GraphqlModule } from './graphql/graphql.module.js';
import { IdentityModule } from './identity/identity.module.js';
import { LeadsModule } from './leads/leads.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { MetaModule } from './meta/meta.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { ProblemFilter } from './problem/problem.filter.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { SandboxModule } from './sandbox/sandbox.module.js';
import { SiteModule } from './site/site.module.js';
import { DeprecationMiddleware } from './versioning/deprecation.middleware.js';

@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(config),
        RateLimitModule.forRoot(config),
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
      ],
      providers: [
        { provide: APP_FILTER, useClass: ProblemFilter },
        // In this order: who is calling decides which rate-limit tier applies.
        { provide: APP_GUARD, useClass: BearerGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
    };
  }

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    // Without API_DEPRECATIONS the deprecation middleware would be a pass-through on every request.
    const deprecations = this.config.apiDeprecations.length > 0 ? [DeprecationMiddleware] : [];
    consumer.apply(...deprecations, RawBodyMiddleware).forRoutes('{*path}');
  }
}
