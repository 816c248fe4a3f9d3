import { Injectable, NestMiddleware } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../problem/app-error.js';

/** Decisions §2: bodies are capped at 16 KiB (after decompression). */
export const BODY_LIMIT_BYTES = 16 * 1024;

const readRaw = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

/**
 * Reads every request body as bytes, within the limit, without interpreting it; each route parses what it accepts
 * (JSON, form) so that the wrong media type is a 415 there rather than a silent empty body here.
 * Errors are rethrown so that the problem filter formats them.
 */
@Injectable()
export class RawBodyMiddleware implements NestMiddleware {
  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    await new Promise<void>((resolve, reject) => readRaw(req, res, (error?: unknown) => (error ? reject(classify(error)) : resolve())));
    next();
  }
}

/** body-parser types its own errors; an untyped one comes from zlib (a corrupt or truncated gzip/deflate/br body): the client's fault, not a 500. */
function classify(error: unknown): unknown {
  if (typeof (error as { type?: unknown } | null)?.type === 'string') return error;
  return new AppError('bad_request', 'The request body could not be decompressed; check it matches its Content-Encoding.');
}
