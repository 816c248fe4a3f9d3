import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthModule } from '../oauth/oauth.module.js';
import { AgentRegistration } from './agent-registration.entity.js';
import { IdentityController } from './identity.controller.js';
import { IdentityService } from './identity.service.js';

@Module({ imports: [TypeOrmModule.forFeature([AgentRegistration]), OAuthModule], controllers: [IdentityController], providers: [IdentityService] })
export class IdentityModule {}
