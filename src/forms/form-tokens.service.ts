import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBox } from '../secrets/secret-box.js';
import { SpentFormTokens } from './spent-form-tokens.store.js';

/** What a lead's `Form-Token` header proves: a genuine unspent token issued ≥ 3 s ago, one issued too recently, or nothing. */
export type FormTokenCheck = 'valid' | 'too_fast' | 'invalid';

export interface IssuedFormToken {
  token: string;
  /** ISO 8601, two hours after issue. */
  expires_at: string;
}

/** A token is good for two hours after issue (issue 33). */
export const FORM_TOKEN_TTL_MS = 2 * 3_600_000;
/** A lead sent sooner than this after its token was issued was not typed by a person. */
export const FORM_TOKEN_MIN_AGE_MS = 3_000;

const VERSION = 1;
const ISSUED_BYTES = 6;
const NONCE_BYTES = 12;
const MAC_BYTES = 16;
const PAYLOAD_BYTES = 1 + ISSUED_BYTES + NONCE_BYTES;
/** base64url of 35 bytes, unpadded. */
export const FORM_TOKEN_LENGTH = Math.ceil(((PAYLOAD_BYTES + MAC_BYTES) * 4) / 3);
const TOKEN_TEXT = /^[\w-]+$/;
/** The HMAC key is derived from the service key for this purpose alone (SecretBox.mac), the same on every instance. */
const MAC_CONTEXT = 'form_token';

/**
 * Signed, single-use form tokens (issue 33): GET /forms/token issues one when a form is shown; a lead spends it.
 * A token is base64url of a version byte, the issue time (ms, 48 bits), a random 96-bit nonce and a 128-bit
 * HMAC-SHA256 tag over those, under a key derived from the service key: any instance checks any instance's token with
 * no shared state, and it holds nothing about the visitor. Spending it is the one shared step (SpentFormTokens).
 */
@Injectable()
export class FormTokens {
  constructor(
    private readonly box: SecretBox,
    private readonly spent: SpentFormTokens,
  ) {}

  /** A new token, issued at `now`. */
  issue(now = new Date()): Promise<IssuedFormToken> {
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    payload[0] = VERSION;
    payload.writeUIntBE(now.getTime(), 1, ISSUED_BYTES);
    randomBytes(NONCE_BYTES).copy(payload, 1 + ISSUED_BYTES);
    const token = Buffer.concat([payload, this.tag(payload)]).toString('base64url');
    return Promise.resolve({ token, expires_at: new Date(now.getTime() + FORM_TOKEN_TTL_MS).toISOString() });
  }

  /**
   * Spends `token` (once, across instances) and says what it proves, as of `now`. Anything that is not a genuine,
   * unexpired, unspent token is `invalid`, never an exception; a database failure is one (the caller's to answer).
   */
  async redeem(token: string, now = new Date()): Promise<FormTokenCheck> {
    if (typeof token !== 'string' || token.length !== FORM_TOKEN_LENGTH || !TOKEN_TEXT.test(token)) return 'invalid';
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES || bytes[0] !== VERSION) return 'invalid';
    const payload = bytes.subarray(0, PAYLOAD_BYTES);
    if (!timingSafeEqual(bytes.subarray(PAYLOAD_BYTES), this.tag(payload))) return 'invalid';
    const issuedAt = payload.readUIntBE(1, ISSUED_BYTES);
    const age = now.getTime() - issuedAt;
    // A genuine token from the future is another instance's clock ahead of ours: young, not forged; beyond a TTL, refused.
    if (age >= FORM_TOKEN_TTL_MS || age <= -FORM_TOKEN_TTL_MS) return 'invalid';
    const nonceHash = createHash('sha256')
      .update(payload.subarray(1 + ISSUED_BYTES))
      .digest('hex');
    if (!(await this.spent.spend(nonceHash, issuedAt + FORM_TOKEN_TTL_MS))) return 'invalid';
    return age < FORM_TOKEN_MIN_AGE_MS ? 'too_fast' : 'valid';
  }

  private tag(payload: Buffer): Buffer {
    return this.box.mac(payload.toString('base64url'), MAC_CONTEXT).subarray(0, MAC_BYTES);
  }
}
