import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentRefreshToken } from '../identity/agent-refresh-token.entity.js';
import { AgentRegistration } from '../identity/agent-registration.entity.js';
import { KeyStore } from './key-store.service.js';
import { OAuthController } from './oauth.controller.js';
import { OAuthErrorFormat } from './oauth-error.format.js';
import { OperatorClient } from './operator-client.entity.js';
import { OperatorClients } from './operator-clients.service.js';
import { RevokedToken } from './revoked-token.entity.js';
import { SigningKey } from './signing-key.entity.js';
import { TokenService } from './token.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([AgentRegistration, AgentRefreshToken, SigningKey, RevokedToken, OperatorClient])],
  controllers: [OAuthController],
  providers: [KeyStore, TokenService, OperatorClients, OAuthErrorFormat],
  exports: [KeyStore, TokenService, OperatorClients],
})
export class OAuthModule {}
