import { Module } from '@nestjs/common';
import { HealthService } from './health.service.js';
import { MetaController } from './meta.controller.js';

@Module({ controllers: [MetaController], providers: [HealthService], exports: [HealthService] })
export class MetaModule {}
