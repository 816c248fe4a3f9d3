import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { AppError } from '../problem/app-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Steps } from '../database/step-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { foldEmail, normaliseEmail } from '../leads/lead-rules.js';
import type { MailLanguage, PrivacyCodeMail } from '../mail/mail-templates.js';

/** What a code confirms besides a sign-in: a person's own privacy request, or an owner's claim of an agent. */
export type CodeAbout = PrivacyCodeMail['request'] | 'agent_claim';
import { Outbox } from '../outbox/outbox.service.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { SecretBox } from '../secrets/secret-box.js';
import { Metrics } from '../telemetry/metrics.js';
import { VERIFICATION_EVENT, VerificationStore } from './verification.store.js';

/** How long a code is valid. */
export const CODE_LIFETIME_MS = 10 * 60_000;
/** Tries of one code; the last wrong one ends it. */
export const MAX_TRIES = 5;
/** Fresh codes per address (known or not) per hour. */
export const CODES_PER_ADDRESS_PER_HOUR = 3;
/** Fresh codes per client address per hour, on the rate-limit store (shared through Redis when REDIS_URL is set). */
export const CODES_PER_CLIENT_PER_HOUR = 30;
/** Tries an address's codes of one purpose take in a day, in all: 5 per code, two codes' worth. */
export const TRIES_PER_ADDRESS_PER_DAY = 10;

/**
 * The mailbox an address reaches, as the limits count it: case-folded, and without a `+tag` (`ana+1@x` and `ana+2@x`
 * land in one mailbox, and would otherwise each have their own 3 codes an hour).
 */
export function mailbox(address: string): string {
  const folded = foldEmail(address);
  const at = folded.lastIndexOf('@');
  const local = folded.slice(0, at);
  const plus = local.indexOf('+');
  return plus > 0 ? `${local.slice(0, plus)}${folded.slice(at)}` : folded;
}
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Verifications are kept past the day the cap counts, then purged. */
const KEEP_MS = 2 * DAY_MS;

/** What the mail needs, sealed with the service key until it is sent (docs/decisions/0038-verification-codes.md). */
export interface SealedMail {
  address: string;
  code: string;
  language: MailLanguage;
  /** False for an address that is nobody's: written the same way, never sent. */
  send: boolean;
  /** What the code confirms (a privacy request's type, an agent's claim), for the mail's words. Absent: an inbox sign-in. */
  about?: CodeAbout;
}

export interface StartRequest {
  /** What the code is for (`inbox_sign_in`); a code verifies only for its purpose. */
  purpose: string;
  address: string;
  /** What a right code yields (a person's id); null for an address that is nobody's: no mail, and no code is right. */
  subject: string | null;
  language: MailLanguage;
  clientIp: string;
  /** What the code confirms, for the mail's words, when it does not sign in. */
  about?: CodeAbout;
}

export type StartOutcome = { started: true; token: string; id: string } | { started: false; reason: 'client_limit' | 'address_limit' | 'daily_limit' };
/** `usedMeanwhile`: the code was right, but a try at the same moment used it first (a double click). */
export type CheckOutcome = { verified: true; subject: string } | { verified: false; triesLeft: number; usedMeanwhile?: true };

/**
 * The 429 of a start the limits refused (`verification_rate_limited`), for the public starts (privacy requests, claims):
 * retry at the next UTC day for the daily cap, else within the hour the address and client limits count.
 */
export function codesRefused(reason: Extract<StartOutcome, { started: false }>['reason'], now: number, nothing: string): AppError {
  const retryAfter = reason === 'daily_limit' ? Math.ceil((DAY_MS - (now % DAY_MS)) / 1000) : HOUR_MS / 1000;
  return new AppError('verification_rate_limited', `Too many codes were sent to this address, from this client address, or today; ${nothing}.`, {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * Codes sent to an address (issue 35): six digits, kept only as a keyed digest, valid 10 minutes, 5 tries, 3 fresh codes
 * an hour per address and 30 per client address, VERIFICATION_MAIL_DAILY_LIMIT a day in all. The mail is an outbox
 * message aimed at the verification (VerificationMailChannel), written in the same transaction; an address that is
 * nobody's gets the same rows and the same message, which the channel does not send, so the answer and its time say
 * nothing of who has access. The caller holds an opaque token (a cookie), not the address.
 */
@Injectable()
export class VerificationService {
  private readonly dailyLimit: number;

  constructor(
    private readonly store: VerificationStore,
    private readonly box: SecretBox,
    private readonly outbox: Outbox,
    private readonly limits: RateLimitStore,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.dailyLimit = config.inbox.verificationMailDailyLimit;
  }

  async start(request: StartRequest, now = Date.now()): Promise<StartOutcome> {
    const [client] = await this.limits.incrementAll([{ key: `verification_client:${request.clientIp}`, ttl: HOUR_MS }]);
    if (client.totalHits > CODES_PER_CLIENT_PER_HOUR) return { started: false, reason: 'client_limit' };
    const address = normaliseEmail(request.address);
    const addressMac = this.box.mac(mailbox(address), 'verification-address').toString('hex');
    const id = uuidv7(now);
    const token = randomBytes(32).toString('base64url');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const mail: SealedMail = { address, code, language: request.language, send: request.subject !== null, about: request.about };
    const verification = {
      id,
      tokenHash: sha256(token),
      purpose: request.purpose,
      subject: request.subject,
      addressMac,
      codeMac: this.codeMac(id, code),
      mailSealed: this.box.seal(JSON.stringify(mail), `verification:${id}`),
      createdAt: now,
      expiresAt: now + CODE_LIFETIME_MS,
    };
    const dayStart = now - (now % DAY_MS);
    const { store, outbox, dailyLimit } = this;
    const purpose = request.purpose;
    const outcome = await this.store.sql.run(function* (): Steps<'address_limit' | 'daily_limit' | 'ok'> {
      yield* store.serialise();
      if ((yield* store.countSince(purpose, dayStart)) >= dailyLimit) return 'daily_limit';
      if ((yield* store.countForAddress(addressMac, purpose, now - HOUR_MS)).codes >= CODES_PER_ADDRESS_PER_HOUR) return 'address_limit';
      // Across its codes, an address takes TRIES_PER_ADDRESS_PER_DAY tries a day: new codes do not buy new guesses.
      if ((yield* store.countForAddress(addressMac, purpose, now - DAY_MS)).tries >= TRIES_PER_ADDRESS_PER_DAY) return 'address_limit';
      yield* store.insert(verification);
      yield* outbox.publish(VERIFICATION_EVENT, { verification_id: id }, now, id);
      return 'ok';
    });
    if (outcome !== 'ok') return { started: false, reason: outcome };
    this.outbox.wake();
    // Housekeeping where codes are made, so that no timer is needed: a few old rows at a time.
    await this.store.purge(now - KEEP_MS, 100);
    return { started: true, token, id };
  }

  /** Spends a try of the code the token stands for; a right code is used up at once. */
  check(purpose: string, token: unknown, code: unknown, now = Date.now()): Promise<CheckOutcome> {
    if (typeof token !== 'string' || token.length > 200) return Promise.resolve({ verified: false, triesLeft: 0 });
    return this.spend({ tokenHash: sha256(token) }, purpose, code, now);
  }

  /** The same, for a verification its caller knows by id (a privacy request holds the id of its code's verification). */
  checkById(purpose: string, id: string, code: unknown, now = Date.now()): Promise<CheckOutcome> {
    return this.spend({ id }, purpose, code, now);
  }

  private async spend(key: { tokenHash: string } | { id: string }, purpose: string, code: unknown, now: number): Promise<CheckOutcome> {
    const spent = await this.store.spendTry(key, purpose, MAX_TRIES, now);
    if (!spent) return { verified: false, triesLeft: 0 };
    const triesLeft = MAX_TRIES - spent.attempts;
    const given = typeof code === 'string' ? code.replace(/\s/g, '') : '';
    const right = /^\d{6}$/.test(given) && timingSafeEqual(Buffer.from(this.codeMac(spent.id, given), 'hex'), Buffer.from(spent.codeMac, 'hex'));
    if (!right || spent.subject === null) {
      // Every try a wrong code spends, whatever page or API made it (the pages answer with their form, not a problem).
      // A code that spends no try (expired, used by a double click's first half, out of tries) is not a guess.
      this.metrics.authFailures.inc({ kind: 'verification_code' });
      return { verified: false, triesLeft };
    }
    if (!(await this.store.use(spent.id, now))) return { verified: false, triesLeft: 0, usedMeanwhile: true };
    return { verified: true, subject: spent.subject };
  }

  /** Opens a verification's sealed mail (the mail channel, at its attempt). */
  openMail(id: string, sealed: string): SealedMail {
    return JSON.parse(this.box.open(sealed, `verification:${id}`)) as SealedMail;
  }

  private codeMac(id: string, code: string): string {
    return this.box.mac(`${id}:${code}`, 'verification-code').toString('hex');
  }
}
