import { Module } from '@nestjs/common';
import { AuthMdController, DocsController, FaviconController } from './docs.controller.js';
import { DocsService } from './docs.service.js';
import { OpenApiService } from './openapi.service.js';

@Module({
  controllers: [DocsController, AuthMdController, FaviconController],
  providers: [DocsService, OpenApiService],
  exports: [DocsService, OpenApiService],
})
export class DocsModule {}
