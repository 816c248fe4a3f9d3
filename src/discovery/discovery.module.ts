import { Module } from '@nestjs/common';
import { OAuthModule } from '../oauth/oauth.module.js';
import { DiscoveryController } from './discovery.controller.js';
import { DiscoveryService } from './discovery.service.js';

@Module({ imports: [OAuthModule], controllers: [DiscoveryController], providers: [DiscoveryService] })
export class DiscoveryModule {}
