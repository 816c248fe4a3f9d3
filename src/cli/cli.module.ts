import { Module } from '@nestjs/common';
import { CliController } from './cli.controller.js';
import { CliService } from './cli.service.js';

/** `GET /cli/leads` (the bundled command-line client) and `GET /cli/` (its install page). */
@Module({ controllers: [CliController], providers: [CliService] })
export class CliModule {}
