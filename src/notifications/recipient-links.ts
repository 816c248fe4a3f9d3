import { createHash, timingSafeEqual } from 'node:crypto';
import { isCanonicalUuid } from '../database/uuid-v7.js';
import { domainToASCII } from 'node:url';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SecretBox } from '../secrets/secret-box.js';

/** How long a confirmation link works. */
export const CONFIRMATION_LIFETIME_MS = 7 * 24 * 3_600_000;
/** Where the links of the e-mails lead (src/notifications/notification-pages.controller.ts). */
export const CONFIRM_PATH = '/notifications/confirm';
export const UNSUBSCRIBE_PATH = '/notifications/unsubscribe';

const MAC_BYTES = 32;
/** A link's token as the URL carries it (base64url); anything longer is no token of ours. */
const TOKEN = /^[A-Za-z0-9_-]{20,128}$/;

/**
 * The tokens of the links in the e-mails (docs/decisions/0036-notification-recipients.md), each an HMAC under a key
 * derived from the service's secrets key for its purpose alone (SecretBox.mac), so that any instance checks any
 * instance's link and the database alone can forge none:
 * - confirmation: HMAC of the recipient id and a random nonce (the nonce travels in the outbox message, the token never
 *   is stored; the row keeps only its SHA-256, for the single-use lookup);
 * - unsubscribe: the recipient id and HMAC of it, good for as long as the recipient exists;
 * - the confirmation-mail counter of an address: an HMAC of its folded form, so the shared store never holds it.
 */
@Injectable()
export class RecipientLinks {
  private readonly base: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly box: SecretBox,
  ) {
    this.base = config.publicBaseUrl;
  }

  confirmationToken(recipientId: string, nonce: string): string {
    return this.box.mac(`${recipientId}\0${nonce}`, 'notification_confirmation').toString('base64url');
  }

  confirmUrl(token: string): string {
    return `${this.base}${CONFIRM_PATH}?token=${token}`;
  }

  unsubscribeToken(recipientId: string): string {
    const id = Buffer.from(recipientId.replaceAll('-', ''), 'hex');
    return Buffer.concat([id, this.unsubscribeMac(recipientId)]).toString('base64url');
  }

  unsubscribeUrl(recipientId: string): string {
    return `${this.base}${UNSUBSCRIBE_PATH}?token=${this.unsubscribeToken(recipientId)}`;
  }

  /** The recipient id an unsubscribe token names, or undefined for anything this service did not make. */
  unsubscribeRecipient(token: unknown): string | undefined {
    if (!isToken(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== 16 + MAC_BYTES) return undefined;
    const hex = raw.subarray(0, 16).toString('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return isCanonicalUuid(id) && timingSafeEqual(raw.subarray(16), this.unsubscribeMac(id)) ? id : undefined;
  }

  /** The counter key of an address's confirmation e-mails in the shared rate-limit store: one per mailbox (mailboxOf). */
  addressKey(folded: string): string {
    return this.box.mac(mailboxOf(folded), 'notification_confirmation_limit').toString('base64url');
  }

  private unsubscribeMac(recipientId: string): Buffer {
    return this.box.mac(recipientId, 'notification_unsubscribe');
  }
}

const GMAIL = new Set(['gmail.com', 'googlemail.com']);

/**
 * The mailbox a folded address reaches, for the daily cap: its sub-address (`+tag`) dropped, its domain in ASCII
 * (punycode), and Gmail's dots and domains taken as one. Each variant is another recipient, but not three more
 * e-mails a day to the same person.
 */
function mailboxOf(folded: string): string {
  const at = folded.lastIndexOf('@');
  let local = folded.slice(0, at);
  let domain = domainToASCII(folded.slice(at + 1)) || folded.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (GMAIL.has(domain)) [local, domain] = [local.replaceAll('.', ''), 'gmail.com'];
  return `${local}@${domain}`;
}

/** What the row keeps of a confirmation token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A string shaped like one of our tokens (a query parameter may be missing, repeated or anything else). */
export function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN.test(value);
}
