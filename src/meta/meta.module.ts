import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { HealthService } from './health.service.js';
import { MetaController } from './meta.controller.js';

@Module({ imports: [WebhooksModule], controllers: [MetaController], providers: [HealthService], exports: [HealthService] })
export class MetaModule {}
