import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthModule } from '../oauth/oauth.module.js';
import { AgentRefreshToken } from './agent-refresh-token.entity.js';
import { AgentRegistrationAddress } from './agent-registration-address.entity.js';
import { AgentRegistration } from './agent-registration.entity.js';
import { VerificationModule } from '../verification/verification.module.js';
import { AgentClaimsStore } from './agent-claims.store.js';
import { ClaimPageController } from './claim-page.controller.js';
import { ClaimsService } from './claims.service.js';
import { IdentityController } from './identity.controller.js';
import { IdentityService } from './identity.service.js';
import { RefreshTokens } from './refresh-tokens.service.js';
import { RegistrationPurge } from './registration-purge.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AgentRegistration, AgentRefreshToken, AgentRegistrationAddress]), OAuthModule, VerificationModule],
  controllers: [IdentityController, ClaimPageController],
  providers: [IdentityService, RefreshTokens, RegistrationPurge, ClaimsService, AgentClaimsStore],
})
export class IdentityModule {}
