import { parse as parseContentType } from 'content-type';
import type { Request } from 'express';
import { isInboxPath } from '../inbox/inbox-path.js';
import { AppError, validationFailed } from '../problem/app-error.js';
import { parseStrictJson } from './strict-json.js';

export const JSON_MEDIA_TYPE = 'application/json';
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
/** The media types a route can declare with @Consumes() and read with @Body(). */
export type BodyMediaType = typeof JSON_MEDIA_TYPE | typeof FORM_MEDIA_TYPE;

/** What the body middleware made of a request's Content-Type and body. */
interface BodyOutcome {
  /** The media type, lower-cased; undefined when there is no Content-Type, null when it is malformed. */
  mediaType: string | null | undefined;
  /** The charset parameter, lower-cased. */
  charset: string | undefined;
  /** The bytes, until a route that reads this media type parses them (then the parsed value is req.body). */
  raw?: Buffer;
  /** Why the body is not a valid body of its media type (JSON or form), once parsed, when it is not. */
  error?: AppError;
}

const OUTCOME = Symbol('body outcome');
type RequestWithOutcome = Request & { [OUTCOME]?: BodyOutcome };
const NO_CONTENT_TYPE: BodyOutcome = Object.freeze({ mediaType: undefined, charset: undefined });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Records the request's media type and leaves the bytes in req.body. A JSON or form body is parsed only when a route
 * reads it (jsonBodyOf, formBodyOf: the body guard of a route marked @Consumes, or MCP), after authentication and rate
 * limiting, so a request to a route that reads no body (a 404, a preflight, health) costs no parse. A body that fails
 * its media type's rules is answered then, in that route's terms.
 */
export function recordBody(req: Request, raw: Buffer | undefined): void {
  if (raw) req.body = raw;
  const header = req.headers['content-type'];
  if (!header) {
    (req as RequestWithOutcome)[OUTCOME] = NO_CONTENT_TYPE;
    return;
  }
  const outcome: BodyOutcome = { mediaType: null, charset: undefined, raw };
  try {
    const parsed = parseContentType(header);
    outcome.mediaType = parsed.type;
    outcome.charset = parsed.parameters.charset?.toLowerCase();
  } catch {
    // mediaType stays null: every route that reads a body refuses it.
  }
  (req as RequestWithOutcome)[OUTCOME] = outcome;
}

/** Parses the body once, as its (already checked) media type, into req.body or outcome.error. */
function settle(req: Request, outcome: BodyOutcome, parse: (raw: Buffer | undefined) => unknown): void {
  if (!('raw' in outcome)) return;
  const parsed = parse(outcome.raw);
  delete outcome.raw;
  if (parsed instanceof AppError) outcome.error = parsed;
  else req.body = parsed;
}

function outcomeOf(req: Request): BodyOutcome {
  return (req as RequestWithOutcome)[OUTCOME] ?? NO_CONTENT_TYPE;
}

/**
 * The request's JSON value, or the problem a JSON endpoint answers: 415 for another media type or charset, 400 for an
 * empty, non-UTF-8 or malformed body, 422 for duplicate or prototype keys and nesting (strict-json.ts).
 */
export function jsonBodyOf(req: Request): unknown {
  const { mediaType, charset } = outcomeOf(req);
  const refuse = (detail: string) => new AppError('unsupported_media_type', detail);
  if (mediaType === undefined) throw refuse('The Content-Type header is missing; send application/json.');
  if (mediaType === null) throw refuse('The Content-Type header is malformed; send application/json.');
  if (mediaType !== JSON_MEDIA_TYPE) throw refuse(`Content-Type ${mediaType} is not accepted; send application/json.`);
  if (charset !== undefined && charset !== 'utf-8') throw refuse(`charset=${charset} is not accepted; send UTF-8 (charset=utf-8 or none).`);
  const outcome = outcomeOf(req);
  settle(req, outcome, parseJson);
  if (outcome.error) throw outcome.error;
  return req.body;
}

/** jsonBodyOf, and the value must be an object (400 body_not_object). */
export function jsonObjectBodyOf(req: Request): Record<string, unknown> {
  const value = jsonBodyOf(req);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('body_not_object', `The request body is ${describe(value)}, not a JSON object.`);
  }
  return value as Record<string, unknown>;
}

/**
 * The request's form parameters (RFC 6749 §3.2). Another media type (JSON included), a charset other than UTF-8, a
 * repeated parameter or bytes that are not UTF-8 are `invalid_request`, as OAuth clients expect.
 */
export function formBodyOf(req: Request): Record<string, string> {
  const { mediaType, charset } = outcomeOf(req);
  if (mediaType !== FORM_MEDIA_TYPE) {
    throw new AppError('invalid_request', `The body must be application/x-www-form-urlencoded${mediaType ? `, not ${mediaType}` : ''}.`);
  }
  if (charset !== undefined && charset !== 'utf-8') throw new AppError('invalid_request', 'The body must be encoded as UTF-8.');
  const outcome = outcomeOf(req);
  settle(req, outcome, parseForm);
  if (outcome.error) throw outcome.error;
  return req.body as Record<string, string>;
}

function parseJson(raw: Buffer | undefined): unknown {
  if (!raw || raw.length === 0) return new AppError('malformed_json', 'The request body is empty; send a JSON object.');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return new AppError('invalid_encoding', 'The request body is not valid UTF-8.');
  }
  const parsed = parseStrictJson(text);
  if (parsed.ok) return parsed.value;
  return parsed.syntax ? new AppError('malformed_json', 'The request body is not valid JSON.') : validationFailed(parsed.errors);
}

const INBOX_FORM = Symbol('inbox form');

/**
 * The fields of an inbox form (application/x-www-form-urlencoded, UTF-8, within the same body limit as every body):
 * accepted under /inbox only, where the pages post them; a field may repeat (bulk actions send `id` once per lead).
 * Anything else is 415 unsupported_media_type, answered as the inbox's error page.
 */
export function inboxFormOf(req: Request): URLSearchParams {
  const cached = (req as Request & { [INBOX_FORM]?: URLSearchParams })[INBOX_FORM];
  if (cached) return cached;
  const { mediaType, charset, raw } = outcomeOf(req);
  if (!isInboxPath(req.path) || mediaType !== FORM_MEDIA_TYPE || (charset !== undefined && charset !== 'utf-8')) {
    throw new AppError('unsupported_media_type', `Inbox forms are sent as ${FORM_MEDIA_TYPE} in UTF-8${mediaType ? `, not ${mediaType}` : ''}.`);
  }
  let text: string;
  try {
    text = raw ? utf8.decode(raw) : '';
  } catch {
    throw new AppError('invalid_encoding', 'The form is not valid UTF-8.');
  }
  const form = new URLSearchParams(text);
  (req as Request & { [INBOX_FORM]?: URLSearchParams })[INBOX_FORM] = form;
  return form;
}

const MULTIPART_FORM_MEDIA_TYPE = 'multipart/form-data';

/**
 * formBodyOf, or the text fields of a multipart/form-data body (RFC 7578): what RFC 8058 §3.2 asks a mail receiver to
 * send for a one-click unsubscribe. Parsed by the platform's own parser (the Fetch API's FormData); a file, a repeated
 * field or a malformed body is invalid_request, as in formBodyOf.
 */
export async function formFieldsOf(req: Request): Promise<Record<string, string>> {
  const outcome = outcomeOf(req);
  if (outcome.mediaType !== MULTIPART_FORM_MEDIA_TYPE) return formBodyOf(req);
  let form: FormData;
  try {
    form = await new Response(outcome.raw ?? null, { headers: { 'content-type': req.headers['content-type']! } }).formData();
  } catch {
    throw new AppError('invalid_request', 'The body is not valid multipart/form-data.');
  }
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of form) {
    if (typeof value !== 'string' || Object.hasOwn(fields, name)) throw new AppError('invalid_request', 'Send each field once, as text, not a file.');
    fields[name] = value;
  }
  return fields;
}

/**
 * A page's form (a person's page, no cookie): its fields, or 400 `invalid_form` for a body that is no such form
 * (another media type, a field twice, a file, not UTF-8).
 */
export async function pageFormOf(req: Request): Promise<Record<string, string>> {
  try {
    return await formFieldsOf(req);
  } catch (error) {
    if (error instanceof AppError) throw new AppError('invalid_form', error.detail);
    throw error;
  }
}

/** Empty values count as absent (RFC 6749 §3.2). */
function parseForm(raw: Buffer | undefined): Record<string, string> | AppError {
  let text = '';
  if (raw) {
    try {
      text = utf8.decode(raw);
    } catch {
      return new AppError('invalid_request', 'The body is not valid UTF-8.');
    }
  }
  const params = Object.create(null) as Record<string, string>;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name)) return new AppError('invalid_request', `The parameter ${name} is repeated.`);
    seen.add(name);
    if (value !== '') params[name] = value;
  }
  return params;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
