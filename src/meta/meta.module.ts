import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module.js';
import { HealthService } from './health.service.js';
import { MetaController } from './meta.controller.js';

@Module({ imports: [OutboxModule], controllers: [MetaController], providers: [HealthService], exports: [HealthService] })
export class MetaModule {}
