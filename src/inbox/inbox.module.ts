import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { InboxAssetsController } from './inbox-assets.controller.js';
import { InboxErrorFormat } from './inbox-error.format.js';
import { InboxPageGuard } from './inbox-page.guard.js';
import { InboxPages } from './inbox-pages.service.js';
import { PeopleModule } from '../people/people.module.js';
import { VerificationModule } from '../verification/verification.module.js';
import { InboxOidc } from './inbox-oidc.service.js';
import { InboxSignIn } from './inbox-sign-in.service.js';
import { InboxSessions } from './inbox-sessions.service.js';
import { InboxController } from './inbox.controller.js';
import { InboxMiddleware } from './inbox.middleware.js';

/**
 * The inbox's shell (issue 35): sessions, pages (eta views, pt-BR and English), CSRF, the inbox's CSP and error pages.
 * Page modules import it for InboxPages and @InboxPage().
 */
@Module({
  imports: [PeopleModule, VerificationModule],
  controllers: [InboxController, InboxAssetsController],
  providers: [InboxSessions, InboxPages, InboxPageGuard, InboxErrorFormat, InboxSignIn, InboxOidc],
  exports: [InboxSessions, InboxPages, InboxPageGuard, PeopleModule],
})
export class InboxModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(InboxMiddleware).forRoutes('inbox', 'inbox/{*path}');
  }
}
