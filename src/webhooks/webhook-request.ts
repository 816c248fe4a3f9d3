import { escapePointer } from '../body/strict-json.js';
import { codePointLength, FORBIDDEN_CHARACTER } from '../leads/lead-rules.js';
import { parseDateTime } from '../leads/rfc3339.js';
import { validationFailed } from '../problem/app-error.js';
import type { FieldError } from '../problem/error-catalog.js';
import { EVENT_TYPES } from './webhook-events.js';
import type { WebhookEndpointStatus } from './webhook-endpoint.entity.js';

export const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION = 500;
const MAX_EVENTS = 10;

/** A create or update, checked for shape; the URL's addresses are checked by the service (they need a lookup). */
export interface EndpointChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: WebhookEndpointStatus;
}

/** POST /api/v1/webhooks: `url` required, `events` and `description` optional; unknown members refused. */
export function parseEndpointCreate(body: Record<string, unknown>): EndpointChanges {
  return parse(body, ['url', 'events', 'description'], true);
}

/** PATCH /api/v1/webhooks/{id}: any of `url`, `events`, `description` (null clears it), `status`; at least one. */
export function parseEndpointUpdate(body: Record<string, unknown>): EndpointChanges {
  if (Object.keys(body).length === 0) {
    throw validationFailed([{ pointer: '', code: 'empty_patch', detail: 'Send at least one of url, events, description and status.' }]);
  }
  return parse(body, ['url', 'events', 'description', 'status'], false);
}

function parse(body: Record<string, unknown>, fields: string[], create: boolean): EndpointChanges {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => !fields.includes(key))
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a webhook endpoint.` }));
  const changes: EndpointChanges = {};

  if (body.url === undefined) {
    if (create) errors.push({ pointer: '/url', code: 'required', detail: 'url is required: the https URL that receives the events.' });
  } else if (typeof body.url !== 'string') errors.push({ pointer: '/url', code: 'invalid_type', detail: 'url must be a string.' });
  else if (body.url.length > MAX_URL_LENGTH) errors.push({ pointer: '/url', code: 'too_long', detail: `url must have at most ${MAX_URL_LENGTH} characters.` });
  else changes.url = body.url;

  if (body.events !== undefined) {
    const events = body.events;
    if (!Array.isArray(events)) errors.push({ pointer: '/events', code: 'invalid_type', detail: 'events must be an array of event types.' });
    else if (events.length === 0) errors.push({ pointer: '/events', code: 'too_short', detail: 'events must name at least one event type.' });
    else if (events.length > MAX_EVENTS) errors.push({ pointer: '/events', code: 'too_many_items', detail: `events may list at most ${MAX_EVENTS} types.` });
    else {
      const before = errors.length;
      events.forEach((event, index) => {
        if (typeof event !== 'string' || !(EVENT_TYPES as readonly string[]).includes(event)) {
          errors.push({ pointer: `/events/${index}`, code: 'unknown_event', detail: `Known event types: ${EVENT_TYPES.join(', ')}.` });
        } else if (events.indexOf(event) !== index) {
          errors.push({ pointer: `/events/${index}`, code: 'duplicate', detail: `${event} is listed twice.` });
        }
      });
      if (errors.length === before) changes.events = events as string[];
    }
  }

  if (body.description !== undefined) {
    const description = body.description;
    if (description === null && !create) changes.description = null;
    else if (typeof description !== 'string') errors.push({ pointer: '/description', code: 'invalid_type', detail: 'description must be a string.' });
    else if (codePointLength(description) > MAX_DESCRIPTION)
      errors.push({ pointer: '/description', code: 'too_long', detail: `description must have at most ${MAX_DESCRIPTION} characters.` });
    else if (FORBIDDEN_CHARACTER.test(description))
      errors.push({ pointer: '/description', code: 'invalid_characters', detail: 'description contains control or bidirectional characters.' });
    else changes.description = description.trim().normalize('NFC') || null;
  }

  if (body.status !== undefined) {
    if (body.status !== 'enabled' && body.status !== 'disabled') {
      errors.push({ pointer: '/status', code: 'invalid_value', detail: 'status must be "enabled" or "disabled".' });
    } else changes.status = body.status;
  }

  if (errors.length) throw validationFailed(errors);
  return changes;
}

/** POST /api/v1/webhooks/{id}/replay: `since` required, `until` optional and after it (exclusive). */
export function parseReplay(body: Record<string, unknown>): { since: Date; until?: Date } {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => key !== 'since' && key !== 'until')
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a replay.` }));
  const date = (name: 'since' | 'until'): Date | undefined => {
    const value = body[name];
    if (value === undefined) {
      if (name === 'since') errors.push({ pointer: '/since', code: 'required', detail: 'since is required: an RFC 3339 date-time.' });
      return undefined;
    }
    if (typeof value !== 'string') {
      errors.push({ pointer: `/${name}`, code: 'invalid_type', detail: `${name} must be a string.` });
      return undefined;
    }
    const parsed = value.length <= 64 ? parseDateTime(value) : undefined;
    if (!parsed)
      errors.push({
        pointer: `/${name}`,
        code: 'invalid_date',
        detail: `${name} must be an RFC 3339 date-time with a time zone, such as 2026-11-22T13:45:14Z.`,
      });
    return parsed;
  };
  const since = date('since');
  const until = date('until');
  if (since && until && until <= since) errors.push({ pointer: '/until', code: 'out_of_range', detail: 'until must be after since (until is exclusive).' });
  if (errors.length) throw validationFailed(errors);
  return { since: since!, until };
}
