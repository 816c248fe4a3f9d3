import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthModule } from '../oauth/oauth.module.js';
import { AgentRefreshToken } from './agent-refresh-token.entity.js';
import { AgentRegistration } from './agent-registration.entity.js';
import { IdentityController } from './identity.controller.js';
import { IdentityService } from './identity.service.js';
import { RefreshTokens } from './refresh-tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AgentRegistration, AgentRefreshToken]), OAuthModule],
  controllers: [IdentityController],
  providers: [IdentityService, RefreshTokens],
})
export class IdentityModule {}
