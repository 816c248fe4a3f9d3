import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/**
 * Secrets the service must read back (token-signing private keys, webhook secrets) are stored sealed with one service
 * key: AES-256-GCM, with the row's identity (`signing_key:<kid>`, `webhook_secret:<endpoint id>`) as associated data,
 * so that a sealed value copied onto another row does not open there. Errors never carry the value.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** The MAC key of each context, derived once: keyed intake makes one MAC per lead. */
  private readonly macKeys = new Map<string, Buffer>();

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a secrets key must be ${KEY_BYTES} bytes, not ${key.length}`);
    this.key = Buffer.from(key);
  }

  /** `enc:v1:` + base64url(IV | ciphertext | tag), with a fresh random IV each time. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The plaintext of a value sealed with this key and this context; anything else throws. */
  open(sealed: string, context: string): string {
    if (!SecretBox.isSealed(sealed)) throw new Error(`the value for ${context} is not sealed (no ${PREFIX} prefix)`);
    const encoded = sealed.slice(PREFIX.length);
    const raw = Buffer.from(encoded, 'base64url');
    if (!/^[\w-]+$/.test(encoded) || raw.length < IV_BYTES + TAG_BYTES) throw new Error(`the sealed value for ${context} is malformed`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`the sealed value for ${context} cannot be opened: another secrets key sealed it, or it was altered or moved from another row`);
    }
  }

  /**
   * A keyed digest (HMAC-SHA-256) that only holders of the service key can compute: for values that must be derived
   * again on any instance, never stored. The HMAC key is derived for `context`, so the sealing key itself is never a MAC key.
   */
  mac(value: string, context: string): Buffer {
    let key = this.macKeys.get(context);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `mac:${context}`, KEY_BYTES));
      this.macKeys.set(context, key);
    }
    return createHmac('sha256', key).update(value, 'utf8').digest();
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }
}
