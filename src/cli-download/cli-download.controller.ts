import { Controller, Get, Header, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CliDownloadService } from './cli-download.service.js';

export const CLI_MEDIA_TYPE = 'text/javascript; charset=utf-8';

@Controller('cli')
export class CliDownloadController {
  constructor(private readonly cli: CliDownloadService) {}

  /** The install page: the curl line, the version and the SHA-256 of the file /cli/leads serves. */
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  page(): string {
    return this.cli.installPage();
  }

  /** The file itself, with the service address baked in; conditional requests get 304. */
  @Get('leads')
  download(@Req() req: Request, @Res({ passthrough: true }) res: Response): string | undefined {
    const file = this.cli.get();
    res.setHeader('Content-Type', CLI_MEDIA_TYPE);
    res.setHeader('Content-Disposition', 'attachment; filename="leads"');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('ETag', file.etag);
    if (req.fresh) {
      res.status(304);
      return undefined;
    }
    return file.body;
  }
}
