import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig, CaptchaConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';

/** What the provider said of a token: good, or the reason the lead gets. */
export type CaptchaOutcome = 'ok' | 'captcha_failed' | 'captcha_expired' | 'captcha_unavailable';

/** The lead waits for this at most: a provider slower than this is down, and the lead is held instead. */
export const VERIFY_TIMEOUT_MS = 3000;
/** A siteverify answer is a few hundred bytes; a longer one (a proxy's error page, a hostile server) is not read further. */
export const MAX_ANSWER_BYTES = 16 * 1024;

/** A slow person or a retry, not a bot (Turnstile's replay code; hCaptcha's). */
const EXPIRED_CODES = new Set(['timeout-or-duplicate', 'expired-input-response', 'already-seen-response', 'invalid-or-already-seen-response']);
/** Our side's fault (a wrong secret or site key, a request the provider could not read) or the provider's: never the visitor's. */
const SERVICE_CODES = new Set([
  'missing-input-secret',
  'invalid-input-secret',
  'sitekey-secret-mismatch',
  'invalid-sitekey',
  'missing-sitekey',
  'bad-request',
  'internal-error',
  'missing-remoteip',
  'invalid-remoteip',
  'not-using-dummy-passcode',
]);

interface SiteverifyAnswer {
  success: boolean;
  'error-codes'?: unknown;
  hostname?: unknown;
}

/**
 * Asks the captcha provider's siteverify endpoint about a token (Cloudflare Turnstile or hCaptcha, the same form-encoded
 * shape). Every failure to get an answer is `captcha_unavailable`: the lead is held, never refused. The secret and the
 * token are never logged; the log says only when the provider stops or starts answering.
 */
@Injectable()
export class CaptchaVerifier {
  private readonly logger = new Logger('Captcha');
  private readonly captcha: CaptchaConfig | null;
  /**
   * The hosts of CORS_ORIGINS and of PUBLIC_BASE_URL (a page the service's own origin serves posts without CORS): a
   * token solved on another site is no proof for this one. Null when any origin may post.
   */
  private readonly hostnames: ReadonlySet<string> | null;
  private answering = true;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.captcha = config.captcha;
    this.hostnames = config.corsOrigins === '*' ? null : new Set([...config.corsOrigins, config.publicBaseUrl].map((origin) => new URL(origin).hostname));
  }

  /** `retryKey`: the same for each attempt at one lead (see LeadEvidence), so that Turnstile answers a retry as the first. */
  async verify(token: string, remoteIp: string | undefined, retryKey?: string): Promise<CaptchaOutcome> {
    const captcha = this.captcha;
    if (!captcha) return 'captcha_unavailable';
    const form = new URLSearchParams({ secret: captcha.secret, response: token });
    if (remoteIp) form.set('remoteip', remoteIp);
    // Turnstile: a retried call with the same key gets the first answer rather than "already spent".
    if (captcha.provider === 'turnstile') form.set('idempotency_key', retryKey === undefined ? randomUUID() : idempotencyKeyOf(retryKey, token));
    else form.set('sitekey', captcha.siteKey);
    let answer: unknown;
    try {
      const res = await fetch(captcha.verifyUrl, { method: 'POST', body: form, redirect: 'error', signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS) });
      if (!res.ok) {
        await res.body?.cancel();
        return this.unavailable(`answered HTTP ${res.status}`);
      }
      const text = await boundedText(res);
      if (text === undefined) return this.unavailable(`answered more than ${MAX_ANSWER_BYTES} bytes`);
      answer = JSON.parse(text);
    } catch (error) {
      return this.unavailable(
        (error as { name?: unknown } | null)?.name === 'TimeoutError' ? `did not answer within ${VERIFY_TIMEOUT_MS} ms` : 'could not be reached or read',
      );
    }
    if (!isAnswer(answer)) return this.unavailable('gave an answer that is not siteverify’s');
    return this.outcomeOf(answer);
  }

  private outcomeOf(answer: SiteverifyAnswer): CaptchaOutcome {
    const codes = Array.isArray(answer['error-codes']) ? answer['error-codes'].filter((code): code is string => typeof code === 'string') : [];
    if (answer.success) {
      const here = !this.hostnames || (typeof answer.hostname === 'string' && this.hostnames.has(answer.hostname));
      return this.available(here ? 'ok' : 'captcha_failed');
    }
    if (codes.some((code) => EXPIRED_CODES.has(code))) return this.available('captcha_expired');
    if (codes.some((code) => SERVICE_CODES.has(code))) return this.unavailable(`refused the request (${codes.filter((c) => SERVICE_CODES.has(c)).join(', ')})`);
    return this.available('captcha_failed');
  }

  private available(outcome: CaptchaOutcome): CaptchaOutcome {
    if (!this.answering) {
      this.answering = true;
      this.logger.log('the captcha provider answers again');
    }
    return outcome;
  }

  private unavailable(why: string): CaptchaOutcome {
    if (this.answering) {
      this.answering = false;
      this.logger.warn(`the captcha provider ${why}: anonymous leads are held until it answers`);
    }
    return 'captcha_unavailable';
  }
}

/**
 * A UUID (Turnstile asks for one) derived from the retry key and the token: another token, or another lead, gets
 * another key. Laid out as a version 4 UUID, the form Cloudflare's examples use.
 */
function idempotencyKeyOf(retryKey: string, token: string): string {
  const hex = createHash('sha256').update(retryKey).update('\n').update(token).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The body as text, or undefined past MAX_ANSWER_BYTES (the rest is not read). The fetch's timeout still applies. */
async function boundedText(res: Response): Promise<string | undefined> {
  if (Number(res.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    return undefined;
  }
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
}

function isAnswer(value: unknown): value is SiteverifyAnswer {
  return typeof value === 'object' && value !== null && typeof (value as { success?: unknown }).success === 'boolean';
}
