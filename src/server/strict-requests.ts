import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ErrorCode } from '../problem/error-catalog.js';
import { gateRequests } from './request-gate.js';

export type Refusal = [ErrorCode, string];

/**
 * What Node's parser lets through and RFC 9112 does not, checked before Express sees the request:
 * - more than `maxHeaders` fields: Node keeps the first `maxHeadersCount` and drops the rest silently, which would
 *   serve an `Authorization` or a second `Idempotency-Key` past them as if absent; the server keeps one more than the
 *   limit so that reaching it means "too many";
 * - a request line without a version (HTTP/0.9), which has no headers and no way to frame an answer;
 * - two `Host` fields (RFC 9112 §3.2), which Node joins into one value.
 */
export function strictRequests(server: Server, maxHeaders: number, refuse: (res: ServerResponse, refusal: Refusal) => void): void {
  server.maxHeadersCount = maxHeaders + 1;
  gateRequests(server, (req, res, next) => {
    const refusal = refusalOf(req, maxHeaders);
    if (refusal) refuse(res, refusal);
    else next(req, res);
  });
}

export function refusalOf(req: IncomingMessage, maxHeaders: number): Refusal | undefined {
  if (req.httpVersionMajor < 1) return ['bad_request', 'The request line has no HTTP version; send HTTP/1.1.'];
  const raw = req.rawHeaders;
  if (raw.length > 2 * maxHeaders) return ['request_header_fields_too_large', `The request has more than ${maxHeaders} header fields.`];
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  return hosts > 1 ? ['bad_request', 'The request has more than one Host header field.'] : undefined;
}
