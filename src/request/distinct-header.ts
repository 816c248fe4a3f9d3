import type { IncomingMessage } from 'node:http';

/**
 * Every value a header was sent with, so that a repeated one can be refused. Node builds `headersDistinct` for all
 * headers on its first read, so it is read only when the header is there at all.
 */
export function distinctHeader(req: IncomingMessage, name: string): string[] | undefined {
  return req.headers[name] === undefined ? undefined : req.headersDistinct[name];
}
