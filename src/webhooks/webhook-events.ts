import { createHmac, randomBytes } from 'node:crypto';

/**
 * The event types an endpoint can subscribe to; `webhook.test` goes only to the endpoint it was sent for. `lead.erased`
 * and `consent.revoked` carry lead ids, never personal data (docs/decisions/0029-data-subject-requests.md).
 * `lead.held` carries a lead screening held (docs/decisions/0033-screening.md).
 */
export const EVENT_TYPES = ['lead.received', 'lead.held', 'lead.erased', 'consent.revoked'] as const;

/**
 * What an endpoint created without `events` gets: all but `lead.held`, which would hand an existing integration leads
 * that no person has looked at; an endpoint gets those only by asking for them.
 */
export const DEFAULT_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((type) => type !== 'lead.held');
export const TEST_EVENT = 'webhook.test';

/** The events that carry a lead's data to a receiver; such a receiver must also be told when that data goes. */
export const LEAD_DATA_EVENTS: readonly string[] = ['lead.received', 'lead.held'];
const LEAD_DATA_GONE_EVENTS = ['lead.erased', 'consent.revoked'];

/**
 * The events an endpoint is sent: those it subscribed to, and `lead.erased` and `consent.revoked` whenever it gets
 * leads' data (`lead.received` or `lead.held`), whatever its `events` list says: those the data was shared with must
 * be told of its erasure or of a revoked consent (LGPD art. 18 §6; docs/decisions/0029-data-subject-requests.md).
 */
export function deliveredEvents(subscribed: readonly string[]): string[] {
  if (!subscribed.some((type) => LEAD_DATA_EVENTS.includes(type))) return [...subscribed];
  return [...new Set([...subscribed, ...LEAD_DATA_GONE_EVENTS])];
}

/** A new signing secret as Standard Webhooks writes it: `whsec_` and base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for each secret, separated
 * by spaces (the current secret, and the previous one during a rotation's grace period).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
