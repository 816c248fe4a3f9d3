import type { Request } from 'express';
import { distinctHeader } from '../request/distinct-header.js';
import { AppError } from '../problem/app-error.js';

const BARE_KEY = /^[\x21-\x7E]([\x20-\x7E]{0,253}[\x21-\x7E])?$/;
const QUOTED_KEY = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\]){1,255})"$/;

/**
 * The Idempotency-Key request header: a structured-field string ("…", per the IETF draft) or, as Stripe clients send it,
 * a bare value; 1 to 255 printable ASCII characters. Absent → undefined; anything else → 400 idempotency_key_invalid.
 */
export function readIdempotencyKey(req: Request): string | undefined {
  const values = distinctHeader(req, 'idempotency-key');
  if (!values) return undefined;
  const invalid = (why: string) => new AppError('idempotency_key_invalid', `The Idempotency-Key header ${why}.`);
  if (values.length > 1) throw invalid('was sent more than once');
  const raw = values[0];
  if (raw.startsWith('"')) {
    const quoted = QUOTED_KEY.exec(raw);
    if (!quoted) throw invalid('is not a valid quoted string of 1 to 255 printable ASCII characters');
    const key = quoted[1].replace(/\\(["\\])/g, '$1');
    if (key.length > 255) throw invalid('must be at most 255 characters');
    return key;
  }
  if (!BARE_KEY.test(raw)) throw invalid('must be 1 to 255 printable ASCII characters');
  return raw;
}
