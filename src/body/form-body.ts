import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { parse as parseContentType } from 'content-type';
import type { Request } from 'express';
import { AppError } from '../problem/app-error.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An application/x-www-form-urlencoded body (RFC 6749 §3.2) as single-valued parameters. Empty values count as absent;
 * a repeated parameter, another media type (JSON included) or bytes that are not UTF-8 are `invalid_request`.
 */
export function parseFormBody(req: Request): Record<string, string> {
  const invalid = (detail: string) => new AppError('invalid_request', detail);
  let mediaType: string;
  let charset: string | undefined;
  try {
    const parsed = parseContentType(req.headers['content-type'] ?? '');
    mediaType = parsed.type;
    charset = parsed.parameters.charset?.toLowerCase();
  } catch {
    throw invalid('The body must be application/x-www-form-urlencoded.');
  }
  if (mediaType !== 'application/x-www-form-urlencoded') throw invalid(`The body must be application/x-www-form-urlencoded, not ${mediaType}.`);
  if (charset !== undefined && charset !== 'utf-8') throw invalid('The body must be encoded as UTF-8.');
  let text = '';
  if (Buffer.isBuffer(req.body)) {
    try {
      text = utf8.decode(req.body);
    } catch {
      throw invalid('The body is not valid UTF-8.');
    }
  }
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name)) throw invalid(`The parameter ${name} is repeated.`);
    seen.add(name);
    if (value !== '') params[name] = value;
  }
  return params;
}

/** The request body as form parameters (see parseFormBody). */
export const FormBody = createParamDecorator((_data: unknown, ctx: ExecutionContext) => parseFormBody(ctx.switchToHttp().getRequest<Request>()));
