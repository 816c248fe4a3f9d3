import { DynamicModule, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { AppConfig } from './config/config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DiscoveryModule } from './discovery/discovery.module.js';
import { DocsModule } from './docs/docs.module.js';
import { RawBodyMiddleware } from './http/raw-body.middleware.js';
import { IdentityModule } from './identity/identity.module.js';
import { LeadsModule } from './leads/leads.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetaModule } from './meta/meta.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { ProblemFilter } from './problem/problem.filter.js';
import { SandboxModule } from './sandbox/sandbox.module.js';
import { SiteModule } from './site/site.module.js';

@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        DatabaseModule.forRoot(config),
        SiteModule,
        DocsModule,
        MetaModule,
        LeadsModule,
        SandboxModule,
        OAuthModule,
        IdentityModule,
        DiscoveryModule,
        AuthModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: ProblemFilter }],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RawBodyMiddleware).forRoutes('{*path}');
  }
}
