import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '../problem/app-error.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { INBOX_ASSETS } from './inbox-assets.js';

/**
 * The inbox's CSS and scripts (htmx included), from the service itself. A link carries the file's version (`?v=`), so
 * such a request may be cached for a year; a request without it, briefly, revalidated by its ETag.
 */
@Controller('inbox/assets')
@RateLimit('api')
export class InboxAssetsController {
  @Get(':file')
  asset(@Param('file') file: string, @Req() req: Request, @Res() res: Response): void {
    const asset = INBOX_ASSETS.get(file);
    if (!asset) throw new AppError('not_found', `There is no inbox asset ${file}.`);
    const etag = `"${asset.version}"`;
    res.setHeader('Cache-Control', req.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    res.setHeader('ETag', etag);
    res.setHeader('Vary', 'Accept-Encoding');
    if (req.headers['if-none-match'] === etag) {
      res.status(304).end();
      return;
    }
    res.status(200).type(asset.contentType).send(asset.body);
  }
}
