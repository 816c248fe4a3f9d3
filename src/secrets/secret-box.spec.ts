import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  const secret = 'whsec_c2VjcmV0LXZhbHVl';

  it('opens what it sealed, in the same context, and the sealed form shows nothing of the secret', () => {
    const sealed = box.seal(secret, 'webhook_secret:wh_1');
    expect(sealed).toMatch(/^enc:v1:[\w-]+$/);
    expect(sealed).not.toContain(secret);
    // 12 bytes of IV, the ciphertext (as long as the plaintext) and 16 bytes of tag.
    expect(Buffer.from(sealed.slice('enc:v1:'.length), 'base64url')).toHaveLength(12 + secret.length + 16);
    expect(SecretBox.isSealed(sealed)).toBe(true);
    expect(box.open(sealed, 'webhook_secret:wh_1')).toBe(secret);
    expect(box.open(box.seal('', 'empty'), 'empty')).toBe('');
  });

  it('uses a fresh IV each time, so one secret sealed twice gives two values', () => {
    const sealed = new Set(Array.from({ length: 50 }, () => box.seal(secret, 'c')));
    expect(sealed.size).toBe(50);
    const ivs = new Set([...sealed].map((s) => Buffer.from(s.slice('enc:v1:'.length), 'base64url').subarray(0, 12).toString('hex')));
    expect(ivs.size).toBe(50);
  });

  it('refuses a value moved to another row (another context)', () => {
    const sealed = box.seal(secret, 'webhook_secret:wh_1');
    expect(() => box.open(sealed, 'webhook_secret:wh_2')).toThrow('cannot be opened');
  });

  it('refuses a value sealed with another key', () => {
    const sealed = new SecretBox(randomBytes(32)).seal(secret, 'c');
    expect(() => box.open(sealed, 'c')).toThrow('the sealed value for c cannot be opened');
  });

  it.each([
    ['the ciphertext', 14],
    ['the IV', 0],
    ['the tag', -1],
  ])('refuses a value whose %s was altered', (_, at) => {
    const sealed = box.seal(secret, 'c');
    const raw = Buffer.from(sealed.slice('enc:v1:'.length), 'base64url');
    raw[at < 0 ? raw.length + at : at] ^= 1;
    expect(() => box.open(`enc:v1:${raw.toString('base64url')}`, 'c')).toThrow('cannot be opened');
  });

  it('refuses plain, truncated and malformed values with a message that never includes them', () => {
    const sealed = box.seal(secret, 'c');
    const cases: [string, string][] = [
      [secret, 'is not sealed'],
      ['enc:v1:', 'is malformed'],
      ['enc:v1:c2hvcnQ', 'is malformed'],
      [`${sealed}!`, 'is malformed'],
      [sealed.slice(0, -4), 'cannot be opened'],
    ];
    for (const [value, problem] of cases) {
      let message = '';
      try {
        box.open(value, 'c');
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(problem);
      expect(message).not.toContain(secret);
      if (value.length > 'enc:v1:'.length) expect(message).not.toContain(value.slice('enc:v1:'.length));
    }
    expect(SecretBox.isSealed(secret)).toBe(false);
  });

  it('derives the same MAC for the same key, value and context, and another for any of them changed', () => {
    const key = randomBytes(32);
    const mac = new SecretBox(key).mac('rt_value', 'refresh_successor');
    expect(mac).toHaveLength(32);
    expect(new SecretBox(Buffer.from(key)).mac('rt_value', 'refresh_successor')).toEqual(mac);
    expect(new SecretBox(key).mac('rt_value', 'other')).not.toEqual(mac);
    expect(new SecretBox(key).mac('rt_other', 'refresh_successor')).not.toEqual(mac);
    expect(new SecretBox(randomBytes(32)).mac('rt_value', 'refresh_successor')).not.toEqual(mac);
  });

  it('takes only a 32-byte key', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow('must be 32 bytes');
  });
});
