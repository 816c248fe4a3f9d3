import { Module } from '@nestjs/common';
import { DocsModule } from '../docs/docs.module.js';
import { LeadsModule } from '../leads/leads.module.js';
import { MetaModule } from '../meta/meta.module.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpController } from './mcp.controller.js';
import { McpService } from './mcp.service.js';

@Module({ imports: [LeadsModule, MetaModule, DocsModule], controllers: [McpController], providers: [McpService, McpServerFactory] })
export class McpModule {}
