import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { parse as parseContentType, type ContentType } from 'content-type';
import type { Request } from 'express';
import { AppError, validationFailed } from '../problem/app-error.js';
import { parseStrictJson } from './strict-json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Turns the raw body into a JSON value, answering every way it can fail with its own problem:
 * 415 media type or charset, 400 empty/invalid UTF-8/malformed, 422 structural findings.
 */
export function parseJsonBody(req: Request): unknown {
  assertJsonMediaType(req.headers['content-type']);
  const raw = req.body as unknown;
  if (!Buffer.isBuffer(raw) || raw.length === 0) throw new AppError('malformed_json', 'The request body is empty; send a JSON object.');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new AppError('invalid_encoding', 'The request body is not valid UTF-8.');
  }
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    if (parsed.syntax) throw new AppError('malformed_json', 'The request body is not valid JSON.');
    throw validationFailed(parsed.errors);
  }
  return parsed.value;
}

/** parseJsonBody, and the value must be an object (400 body_not_object). */
export function parseJsonObjectBody(req: Request): Record<string, unknown> {
  const value = parseJsonBody(req);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('body_not_object', `The request body is ${describe(value)}, not a JSON object.`);
  }
  return value as Record<string, unknown>;
}

function assertJsonMediaType(header: string | undefined): void {
  if (!header) throw new AppError('unsupported_media_type', 'The Content-Type header is missing; send application/json.');
  let parsed: ContentType;
  try {
    parsed = parseContentType(header);
  } catch {
    throw new AppError('unsupported_media_type', 'The Content-Type header is malformed; send application/json.');
  }
  if (parsed.type !== 'application/json') {
    throw new AppError('unsupported_media_type', `Content-Type ${parsed.type} is not accepted; send application/json.`);
  }
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8') {
    throw new AppError('unsupported_media_type', `charset=${charset} is not accepted; send UTF-8 (charset=utf-8 or none).`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** The request body as a validated JSON object (see parseJsonObjectBody). */
export const JsonBody = createParamDecorator((_data: unknown, ctx: ExecutionContext) =>
  parseJsonObjectBody(ctx.switchToHttp().getRequest<Request>()),
);

/** The request body as any JSON value (see parseJsonBody); for endpoints that answer non-objects themselves. */
export const JsonValue = createParamDecorator((_data: unknown, ctx: ExecutionContext) => parseJsonBody(ctx.switchToHttp().getRequest<Request>()));
