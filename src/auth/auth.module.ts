import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { OAuthModule } from '../oauth/oauth.module.js';
import { BearerGuard } from './bearer.guard.js';

@Module({ imports: [OAuthModule], providers: [{ provide: APP_GUARD, useClass: BearerGuard }] })
export class AuthModule {}
