import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../problem/app-error.js';
import { BODY_LIMIT_BYTES, CODED_WIRE_LIMIT_BYTES } from '../server/http-limits.js';
import { recordBody } from './request-body.js';

const DECODERS: Record<string, () => Transform> = { gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress };

/** A failure typed the way body-parser types its own, so that the problem filter answers it the same way. */
class BodyError extends Error {
  constructor(readonly type: 'entity.too.large' | 'encoding.unsupported' | 'request.aborted') {
    super(type);
  }
}

/**
 * Reads every request body as bytes, within the limit, and records its media type (request-body.ts); a route that
 * reads a body has it parsed and checked then (@Consumes, body.guard.ts), so that the wrong media type is a 415 there
 * rather than a silent empty body, and a route that reads none costs no parse.
 * A body over the limit is refused as soon as that is known: from Content-Length before any byte of it is read, else
 * at the byte that passes the limit. The rest is never read: the answer closes the connection (body-parser, used
 * before, read the whole body first, so a client declaring 100 GB was read for as long as it sent).
 * Errors are rethrown so that the problem filter formats them.
 */
@Injectable()
export class BodyParserMiddleware implements NestMiddleware {
  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    let raw: Buffer | undefined;
    if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined) {
      try {
        raw = await readBody(req);
      } catch (error) {
        // Where the next request would start is unknown once a body is left unread.
        res.setHeader('Connection', 'close');
        throw error;
      }
    }
    recordBody(req, raw);
    next();
  }
}

function readBody(req: Request): Promise<Buffer> {
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = coding === 'identity' ? undefined : DECODERS[coding];
  if (coding !== 'identity' && !decoder) return Promise.reject(new BodyError('encoding.unsupported'));
  const wireLimit = decoder ? CODED_WIRE_LIMIT_BYTES : BODY_LIMIT_BYTES;
  if (Number(req.headers['content-length']) > wireLimit) return Promise.reject(new BodyError('entity.too.large'));

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let wire = 0;
    let settled = false;
    const stream: Readable = decoder ? req.pipe(decoder()) : req;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      if (decoder) {
        req.unpipe();
        stream.destroy();
      }
      req.pause();
      reject(error);
    };
    if (decoder) {
      req.on('data', (chunk: Buffer) => {
        wire += chunk.length;
        if (wire > wireLimit) fail(new BodyError('entity.too.large'));
      });
      // A corrupt or truncated gzip/deflate/br body: the client's fault, not a 500.
      stream.on('error', () => fail(new AppError('bad_request', 'The request body could not be decompressed; check it matches its Content-Encoding.')));
    }
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) fail(new BodyError('entity.too.large'));
      else chunks.push(chunk);
    });
    stream.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.on('close', () => {
      if (!req.complete) fail(new BodyError('request.aborted'));
    });
  });
}
