import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { freshDatabase } from '../../test/support/database.js';
import { loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { SecretBox } from '../secrets/secret-box.js';
import { FORM_TOKEN_LENGTH, FORM_TOKEN_TTL_MS, FormTokens } from './form-tokens.service.js';
import { SPENT_PURGE_BATCH, SpentFormTokens } from './spent-form-tokens.store.js';

const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** The service as each instance builds it, on a migrated database of `kind`. */
async function onDatabase(kind: 'sqlite' | 'postgres') {
  const database = await freshDatabase(kind);
  const dataSource = await new DataSource(dataSourceOptions(loadConfig({ LOG_LEVEL: 'silent', ...database.env }))).initialize();
  await runMigrations(dataSource);
  const key = randomBytes(32);
  const store = new SpentFormTokens(dataSource);
  return {
    dataSource,
    store,
    key,
    tokens: new FormTokens(new SecretBox(key), store),
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

const at = (ms: number) => new Date(ms);
const T0 = Date.parse('2026-11-27T12:00:00.000Z');

describe('form tokens', () => {
  let db: Awaited<ReturnType<typeof onDatabase>>;
  beforeAll(async () => {
    db = await onDatabase('sqlite');
  });
  afterAll(() => db.close());

  it('are short base64url, expire two hours after issue, and differ every time', async () => {
    const one = await db.tokens.issue(at(T0));
    const two = await db.tokens.issue(at(T0));
    expect(one.token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(one.token).toHaveLength(FORM_TOKEN_LENGTH);
    expect(FORM_TOKEN_LENGTH).toBeLessThan(64);
    expect(one.expires_at).toBe('2026-11-27T14:00:00.000Z');
    expect(two.token).not.toBe(one.token);
  });

  it('hold the issue time and a nonce, nothing else', async () => {
    const { token } = await db.tokens.issue(at(T0));
    const bytes = Buffer.from(token, 'base64url');
    expect(bytes[0]).toBe(1);
    expect(bytes.readUIntBE(1, 6)).toBe(T0);
    expect(bytes.length).toBe(1 + 6 + 12 + 16);
  });

  it('are valid once, 3 s or more after issue; the second redemption is invalid', async () => {
    const { token } = await db.tokens.issue(at(T0));
    expect(await db.tokens.redeem(token, at(T0 + 3_000))).toBe('valid');
    expect(await db.tokens.redeem(token, at(T0 + 3_001))).toBe('invalid');
    expect(await db.tokens.redeem(token, at(T0 + 60_000))).toBe('invalid');
  });

  it('are too_fast when redeemed less than 3 s after issue, and spent all the same', async () => {
    const { token } = await db.tokens.issue(at(T0));
    expect(await db.tokens.redeem(token, at(T0 + 2_999))).toBe('too_fast');
    expect(await db.tokens.redeem(token, at(T0 + 10_000))).toBe('invalid');
    const early = await db.tokens.issue(at(T0));
    expect(await db.tokens.redeem(early.token, at(T0))).toBe('too_fast');
  });

  it('are invalid two hours after issue, and not spent by being refused', async () => {
    const { token } = await db.tokens.issue(at(T0));
    expect(await db.tokens.redeem(token, at(T0 + FORM_TOKEN_TTL_MS))).toBe('invalid');
    expect(await db.tokens.redeem(token, at(T0 + FORM_TOKEN_TTL_MS - 1))).toBe('valid');
  });

  it('from an instance whose clock is a little ahead are young (too_fast), from hours ahead invalid', async () => {
    const ahead = await db.tokens.issue(at(T0 + 1_000));
    expect(await db.tokens.redeem(ahead.token, at(T0))).toBe('too_fast');
    const farAhead = await db.tokens.issue(at(T0 + FORM_TOKEN_TTL_MS));
    expect(await db.tokens.redeem(farAhead.token, at(T0))).toBe('invalid');
  });

  it('are refused when any byte is changed, or when another service key signed them', async () => {
    const { token } = await db.tokens.issue(at(T0));
    const bytes = Buffer.from(token, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] ^= 0x01;
      expect(await db.tokens.redeem(altered.toString('base64url'), at(T0 + 5_000))).toBe('invalid');
    }
    const other = new FormTokens(new SecretBox(randomBytes(32)), db.store);
    const foreign = await other.issue(at(T0));
    expect(await db.tokens.redeem(foreign.token, at(T0 + 5_000))).toBe('invalid');
    // Refused forgeries spent nothing: the genuine token is still good.
    expect(await db.tokens.redeem(token, at(T0 + 5_000))).toBe('valid');
  });

  it('are good on every instance that shares the service key (each derives the same MAC key)', async () => {
    const instanceA = new FormTokens(new SecretBox(Buffer.from(db.key)), db.store);
    const instanceB = new FormTokens(new SecretBox(Buffer.from(db.key)), db.store);
    const { token } = await instanceA.issue(at(T0));
    expect(await instanceB.redeem(token, at(T0 + 5_000))).toBe('valid');
    expect(await instanceA.redeem(token, at(T0 + 6_000))).toBe('invalid');
  });

  it('a forged token built like a real one (right length, version, time; a guessed tag) is invalid', async () => {
    const forged = Buffer.alloc(35);
    forged[0] = 1;
    forged.writeUIntBE(T0, 1, 6);
    randomBytes(28).copy(forged, 7);
    expect(await db.tokens.redeem(forged.toString('base64url'), at(T0 + 5_000))).toBe('invalid');
  });

  it.each([
    ['empty', ''],
    ['one character short', 'A'.repeat(FORM_TOKEN_LENGTH - 1)],
    ['one character long', 'A'.repeat(FORM_TOKEN_LENGTH + 1)],
    ['oversized', 'A'.repeat(100_000)],
    ['right length, not base64url', '+/='.padEnd(FORM_TOKEN_LENGTH, '*')],
    ['right length, non-ASCII', 'ç'.repeat(FORM_TOKEN_LENGTH)],
    ['padded base64', Buffer.alloc(35, 1).toString('base64').replace(/.$/, '=')],
    ['another version', Buffer.concat([Buffer.of(2), randomBytes(34)]).toString('base64url')],
    ['spaces', ' '.repeat(FORM_TOKEN_LENGTH)],
  ])('%s is invalid, not an error', async (_name, garbage) => {
    await expect(db.tokens.redeem(garbage, at(T0))).resolves.toBe('invalid');
  });

  it('anything that is not a string is invalid, not an error', async () => {
    for (const value of [undefined, null, 42, ['a'], { token: 'a' }]) {
      await expect(db.tokens.redeem(value as unknown as string, at(T0))).resolves.toBe('invalid');
    }
  });
});

describe.each(kinds)('spent form tokens on %s', (kind) => {
  let db: Awaited<ReturnType<typeof onDatabase>>;
  beforeAll(async () => {
    db = await onDatabase(kind);
  });
  afterAll(() => db.close());

  it('of two concurrent redemptions of one token, exactly one is valid (two instances, one database)', async () => {
    const instanceA = new FormTokens(new SecretBox(Buffer.from(db.key)), db.store);
    const instanceB = new FormTokens(new SecretBox(Buffer.from(db.key)), new SpentFormTokens(db.dataSource));
    for (let round = 0; round < 20; round++) {
      const { token } = await instanceA.issue(at(T0));
      const answers = await Promise.all([instanceA.redeem(token, at(T0 + 5_000)), instanceB.redeem(token, at(T0 + 5_000))]);
      expect(answers.sort()).toEqual(['invalid', 'valid']);
    }
  });

  it('a purge deletes the rows of expired tokens in batches and keeps the others, which stay spent', async () => {
    await db.dataSource.query('DELETE FROM form_tokens_spent');
    const p = (n: number) => (kind === 'postgres' ? `$${n}` : '?');
    const expired = SPENT_PURGE_BATCH * 2 + 7;
    for (let i = 0; i < expired; i++) await db.store.spend(`expired-${i}`, T0 - 1 - i);
    const live = await db.tokens.issue(at(T0));
    expect(await db.tokens.redeem(live.token, at(T0 + 5_000))).toBe('valid');

    expect(await db.store.purge(T0)).toBe(expired);
    const [{ n }] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM form_tokens_spent')) as { n: string | number }[];
    expect(Number(n)).toBe(1);
    expect(await db.tokens.redeem(live.token, at(T0 + 6_000))).toBe('invalid');
    const left = (await db.dataSource.query(`SELECT expires_at FROM form_tokens_spent WHERE expires_at > ${p(1)}`, [T0])) as unknown[];
    expect(left).toHaveLength(1);
  });
});
