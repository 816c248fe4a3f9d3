import { Module } from '@nestjs/common';
import { DocsController } from './docs.controller.js';
import { DocsService } from './docs.service.js';
import { OpenApiService } from './openapi.service.js';

@Module({ controllers: [DocsController], providers: [DocsService, OpenApiService], exports: [DocsService, OpenApiService] })
export class DocsModule {}
