import { Module } from '@nestjs/common';
import { CliDownloadController } from './cli-download.controller.js';
import { CliDownloadService } from './cli-download.service.js';

/** `GET /cli/leads` (the bundled command-line client) and `GET /cli/` (its install page). */
@Module({ controllers: [CliDownloadController], providers: [CliDownloadService] })
export class CliDownloadModule {}
