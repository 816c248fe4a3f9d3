import { KEY_LIFETIME_MS } from '../leads/idempotency.service.js';
import { DIGEST_TABLE_MAX } from '../mail/eta-mail-templates.js';
import { CONFIRMATIONS_PER_DAY } from '../notifications/notification-recipients.service.js';
import { CONFIRMATION_LIFETIME_MS } from '../notifications/recipient-links.js';
import { TOKEN_LIFETIMES } from '../oauth/key-store.service.js';
import { BODY_LIMIT_BYTES, inKiB } from '../server/http-limits.js';
import { RESPONSE_BODY_KEPT } from '../webhooks/webhook-http.js';
import { ROTATION_GRACE_MS } from '../webhooks/webhooks.service.js';

/** A lifetime as the pages write it: 900 → "15 minutes", 3600 → "1 hour". */
function lifetime(seconds: number): string {
  const [count, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : [seconds / 60, 'minute'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/**
 * The facts the docs pages (src/docs/pages/*.md) quote from the code, as `{{NAME}}`: each written out from the
 * constant the code uses, so a page cannot fall behind it. Every one is used by some page and a page uses no other
 * (docs.pages.ts stops the start and the build otherwise); src/docs/stated-limits.spec.ts checks this list.
 */
export const DOC_FACTS = {
  ACCESS_TOKEN_LIFETIME: lifetime(TOKEN_LIFETIMES.access_token),
  /** As `expires_in` shows it. */
  ACCESS_TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIMES.access_token),
  ASSERTION_LIFETIME: lifetime(TOKEN_LIFETIMES.assertion),
  BODY_LIMIT: inKiB(BODY_LIMIT_BYTES),
  IDEMPOTENCY_KEY_LIFETIME: lifetime(KEY_LIFETIME_MS / 1000),
  /** How long a recipient's confirmation link stays valid. */
  NOTIFICATION_CONFIRMATION_DAYS: String(CONFIRMATION_LIFETIME_MS / 86_400_000),
  /** Confirmation e-mails an address may get in a day. */
  NOTIFICATION_CONFIRMATIONS_PER_DAY: String(CONFIRMATIONS_PER_DAY),
  /** The most leads a daily digest lists. */
  DIGEST_LEADS: String(DIGEST_TABLE_MAX),
  /** How much of a receiver's answer the delivery log keeps. */
  WEBHOOK_RESPONSE_KEPT: inKiB(RESPONSE_BODY_KEPT),
  /** How long the previous secret keeps signing beside the new one after a rotation. */
  WEBHOOK_SECRET_ROTATION_GRACE: lifetime(ROTATION_GRACE_MS / 1000),
} as const satisfies Record<string, string>;

export type DocFact = keyof typeof DOC_FACTS;
