import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secretsKey, secretsKeyFile, SecretsKeyError } from './secrets-key.js';

describe('secretsKey', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'secrets-'));
  });

  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is SECRETS_KEY when set, on either database, and then no key file is made', () => {
    const key = randomBytes(32);
    expect(secretsKey({ secretsKey: key, dataDir })).toBe(key);
    expect(secretsKey({ secretsKey: key, databaseUrl: 'postgres://db/leads', dataDir })).toBe(key);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('is required with DATABASE_URL, saying why and how to make one', () => {
    const run = () => secretsKey({ databaseUrl: 'postgres://db/leads', dataDir });
    expect(run).toThrow(SecretsKeyError);
    expect(run).toThrow(/^SECRETS_KEY is required with DATABASE_URL: every instance must share .* `openssl rand -base64 32`/);
  });

  it('on SQLite is a key file made in DATA_DIR with mode 0600, and the same key at every start', () => {
    const nested = join(dataDir, 'not-yet');
    const first = secretsKey({ dataDir: nested });
    const file = secretsKeyFile({ dataDir: nested });
    expect(first).toHaveLength(32);
    expect(readFileSync(file, 'utf8')).toBe(`${first.toString('base64')}\n`);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(secretsKey({ dataDir: nested })).toEqual(first);
    // Nothing is left beside it (the file is written under another name and linked into place).
    expect(readdirSync(nested)).toEqual(['secrets.key']);
  });

  it('reads a key file that is there already and never replaces it', () => {
    const key = randomBytes(32);
    writeFileSync(secretsKeyFile({ dataDir }), key.toString('base64'), { mode: 0o600 });
    expect(secretsKey({ dataDir })).toEqual(key);
    expect(readFileSync(secretsKeyFile({ dataDir }), 'utf8')).toBe(key.toString('base64'));
  });

  (process.platform === 'win32' ? it.skip : it)('refuses a key file that group or others may read', () => {
    const file = secretsKeyFile({ dataDir });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    for (const mode of [0o640, 0o604, 0o644]) {
      chmodSync(file, mode);
      expect(() => secretsKey({ dataDir })).toThrow(`may be read by other users (mode 0${mode.toString(8)}): make it 0600 (chmod 600 ${file})`);
    }
  });

  it.each([
    ['empty', ''],
    ['16 bytes', randomBytes(16).toString('base64')],
    ['hex', randomBytes(32).toString('hex')],
    ['two keys', `${randomBytes(32).toString('base64')}\n${randomBytes(32).toString('base64')}`],
  ])('refuses a key file that is %s, never showing its content', (_name, content) => {
    writeFileSync(secretsKeyFile({ dataDir }), content, { mode: 0o600 });
    let message = '';
    try {
      secretsKey({ dataDir });
    } catch (error) {
      expect(error).toBeInstanceOf(SecretsKeyError);
      message = (error as Error).message;
    }
    expect(message).toContain('is not a secrets key (32 bytes as base64 on one line)');
    if (content) expect(message).not.toContain(content.slice(0, 20));
  });
});
