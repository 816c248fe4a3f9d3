/** @system @database the service key: SECRETS_KEY on PostgreSQL, a key file on SQLite */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SigningKey } from '../src/oauth/signing-key.entity.js';
import { SecretBox } from '../src/secrets/secret-box.js';
import { expectContract } from './support/contract.js';
import { SERVER_ENTRY } from './support/server-process.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';
import { itIf } from './support/skips.js';

/** Secrets at rest (docs/decisions/0027-webhooks-outbox.md, Secrets): what the database holds, and a wrong or missing key. */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

async function register(t: TestApp): Promise<string> {
  const res = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous', client_name: 'secrets-test' }).then(expectContract);
  expect(res.status).toBe(200);
  return res.body.identity_assertion;
}

async function accessToken(t: TestApp, assertion: string): Promise<string> {
  const res = await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion }).then(expectContract);
  expect(res.status).toBe(200);
  return res.body.access_token;
}

const submit = (t: TestApp, token: string) =>
  t.http.post('/api/v1/lead').set('Authorization', `Bearer ${token}`).send({ nome: 'Ana', email: 'ana@exemplo.com' }).then(expectContract);

const storedKeys = (database: TestDatabase) => database.query<{ kid: string; private_jwk: string }>('SELECT kid, private_jwk FROM signing_keys ORDER BY kid');

/** The built service started on `env` until it exits (it must: a healthy one would be killed after 20 s and fail the test). */
function startExpectingRefusal(env: Record<string, string>): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [SERVER_ENTRY], {
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('secrets at rest', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(() => database.drop());

  it('stores no private signing key in the clear; on SQLite the service key is a file of mode 0600 in DATA_DIR', async () => {
    const t = await startTestApp({}, database);
    try {
      const token = await accessToken(t, await register(t));
      expect((await submit(t, token)).status).toBe(201);
      const rows = await storedKeys(database);
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.private_jwk).toMatch(/^enc:v1:[\w-]+$/);
        expect(JSON.parse(t.app.get(SecretBox).open(row.private_jwk, `signing_key:${row.kid}`))).toMatchObject({ d: expect.any(String) });
      }
      if (database.kind === 'sqlite') expect(statSync(join(database.env.DATA_DIR, 'secrets.key')).mode & 0o777).toBe(0o600);
    } finally {
      await t.close();
    }
  });

  it('seals in place the plain private keys of rows stored before, which go on signing and verifying', async () => {
    const before = await startTestApp({}, database);
    const assertion = await register(before);
    const tokenBefore = await accessToken(before, assertion);
    // The rows as this service wrote them before private keys were sealed.
    const box = before.app.get(SecretBox);
    const repository = before.dataSource.getRepository(SigningKey);
    for (const row of await repository.find()) await repository.update({ kid: row.kid }, { privateJwk: box.open(row.privateJwk, `signing_key:${row.kid}`) });
    await before.close();
    const plain = await storedKeys(database);
    for (const row of plain) expect(JSON.parse(row.private_jwk)).toMatchObject({ d: expect.any(String) });

    const after = await startTestApp({}, database);
    try {
      // Signed after the restart with the upgraded keys: the assertion key verifies, the access-token key signs anew.
      const tokenAfter = await accessToken(after, assertion);
      expect((await submit(after, tokenAfter)).status).toBe(201);
      expect((await submit(after, tokenBefore)).status).toBe(201);
      const sealed = await storedKeys(database);
      expect(sealed.map((row) => row.kid)).toEqual(plain.map((row) => row.kid));
      for (const [i, row] of sealed.entries()) {
        expect(row.private_jwk).toMatch(/^enc:v1:/);
        expect(after.app.get(SecretBox).open(row.private_jwk, `signing_key:${row.kid}`)).toBe(plain[i].private_jwk);
      }
    } finally {
      await after.close();
    }
  });

  it('refuses to start with another secrets key, saying so, rather than sign with keys it cannot open', async () => {
    const t = await startTestApp({}, database);
    await accessToken(t, await register(t));
    await t.close();
    const kids = (await storedKeys(database)).map((row) => row.kid);

    const wrongKey = randomBytes(32).toString('base64');
    const { status, output } = startExpectingRefusal({ ...database.env, SECRETS_KEY: wrongKey });
    expect(status).toBe(1);
    expect(output).toContain(
      'The signing keys in the database were sealed with another secrets key than this one (SECRETS_KEY, or secrets.key in DATA_DIR): start with the key they were sealed with',
    );
    expect(output).not.toContain(wrongKey);
    expect((await storedKeys(database)).map((row) => row.kid)).toEqual(kids);
  });

  itIf('postgres')('refuses to start on PostgreSQL without SECRETS_KEY, saying why and how to make one', () => {
    const { SECRETS_KEY: _key, ...withoutKey } = database.env;
    const { status, output } = startExpectingRefusal(withoutKey);
    expect(status).toBe(1);
    expect(output).toContain(
      'SECRETS_KEY is required with DATABASE_URL: every instance must share the key that seals stored secrets (signing keys, webhook secrets). Make one with `openssl rand -base64 32`',
    );
  });

  itIf('sqlite', 'posix')('refuses to start on SQLite when others may read the key file', async () => {
    const t = await startTestApp({}, database);
    await t.close();
    const file = join(database.env.DATA_DIR, 'secrets.key');
    chmodSync(file, 0o644);
    const { status, output } = startExpectingRefusal(database.env);
    expect(status).toBe(1);
    expect(output).toContain(`${file} may be read by other users (mode 0644): make it 0600 (chmod 600 ${file}) and start again`);
  });
});
