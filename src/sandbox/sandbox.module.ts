import { Module } from '@nestjs/common';
import { LeadsModule } from '../leads/leads.module.js';
import { SandboxController } from './sandbox.controller.js';
import { SandboxService } from './sandbox.service.js';

@Module({ imports: [LeadsModule], controllers: [SandboxController], providers: [SandboxService] })
export class SandboxModule {}
