import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config/config.js';
import { SecretBox } from '../secrets/secret-box.js';
import { RecipientLinks, tokenHash } from './recipient-links.js';

describe('RecipientLinks', () => {
  const key = randomBytes(32);
  const config = loadConfig({ PUBLIC_BASE_URL: 'https://leads.example.com', DATA_DIR: '/tmp/unused' });
  const links = new RecipientLinks(config, new SecretBox(key));
  const id = '019ac5e2-7b10-7c3d-9e4f-5a6b7c8d9e0f';

  it('derives a confirmation token from recipient and nonce: the same on every instance, another for another nonce', () => {
    const token = links.confirmationToken(id, 'nonce-1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new RecipientLinks(config, new SecretBox(key)).confirmationToken(id, 'nonce-1')).toBe(token);
    expect(links.confirmationToken(id, 'nonce-2')).not.toBe(token);
    expect(new RecipientLinks(config, new SecretBox(randomBytes(32))).confirmationToken(id, 'nonce-1')).not.toBe(token);
    expect(tokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(links.confirmUrl(token)).toBe(`https://leads.example.com/notifications/confirm?token=${token}`);
  });

  it('reads the recipient back from its unsubscribe token, and nothing from an altered or foreign one', () => {
    const token = links.unsubscribeToken(id);
    expect(links.unsubscribeUrl(id)).toBe(`https://leads.example.com/notifications/unsubscribe?token=${token}`);
    expect(links.unsubscribeRecipient(token)).toBe(id);
    const other = '019ac5e2-7b10-7c3d-9e4f-5a6b7c8d9e10';
    const raw = Buffer.from(token, 'base64url');
    const swapped = Buffer.concat([Buffer.from(other.replaceAll('-', ''), 'hex'), raw.subarray(16)]).toString('base64url');
    expect(links.unsubscribeRecipient(swapped)).toBeUndefined();
    raw[raw.length - 1] ^= 1;
    expect(links.unsubscribeRecipient(raw.toString('base64url'))).toBeUndefined();
    expect(new RecipientLinks(config, new SecretBox(randomBytes(32))).unsubscribeRecipient(token)).toBeUndefined();
    for (const bad of [undefined, '', 'x', ['a', 'b'], token.slice(0, -2), `${token}AA`, 'a'.repeat(500), '../../etc/passwd'])
      expect(links.unsubscribeRecipient(bad)).toBeUndefined();
  });

  it('keys the confirmation counter of an address by an HMAC, never the address', () => {
    const counter = links.addressKey('ana@example.com');
    expect(counter).not.toContain('ana');
    expect(counter).toBe(links.addressKey('ana@example.com'));
    expect(counter).not.toBe(links.addressKey('bia@example.com'));
  });

  it('counts the confirmation e-mails of one mailbox under one key, whatever its sub-address or the form of its domain', () => {
    // Each of these is delivered to ana@bücher.example's mailbox: three more e-mails a day each would flood it.
    const key = links.addressKey('ana@xn--bcher-kva.example');
    for (const variant of ['ana@bücher.example', 'ana+1@bücher.example', 'ana+promo@xn--bcher-kva.example', 'ana+@bücher.example']) {
      expect(links.addressKey(variant)).toBe(key);
    }
    // Gmail ignores dots in the local part.
    expect(links.addressKey('a.n.a+x@googlemail.com')).toBe(links.addressKey('ana@gmail.com'));
    expect(links.addressKey('ana.b@example.com')).not.toBe(links.addressKey('anab@example.com'));
    expect(links.addressKey('+ana@example.com')).not.toBe(links.addressKey('@example.com'));
  });
});
