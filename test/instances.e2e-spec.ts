/** @system @database two built services on one database */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { KeyStore } from '../src/oauth/key-store.service.js';
import { expectContract } from './support/contract.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';
import { describeIf } from './support/skips.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const LEAD = { nome: 'Ana', email: 'ana@exemplo.com' };

async function register(t: TestApp): Promise<string> {
  const res = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous', client_name: 'instances-test' }).then(expectContract);
  expect(res.status).toBe(200);
  return res.body.identity_assertion;
}

async function exchange(t: TestApp, assertion: string) {
  return t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion }).then(expectContract);
}

async function accessToken(t: TestApp, assertion: string): Promise<string> {
  const res = await exchange(t, assertion);
  expect(res.status).toBe(200);
  return res.body.access_token;
}

const submit = (t: TestApp, token: string) => t.http.post('/api/v1/lead').set('Authorization', `Bearer ${token}`).send(LEAD).then(expectContract);
const kids = async (t: TestApp): Promise<string[]> =>
  (await t.http.get('/.well-known/jwks.json').then(expectContract)).body.keys.map((k: { kid: string }) => k.kid);

describe('instances sharing one database', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(() => database.drop());

  it('accepts after a restart the tokens and assertions issued before it', async () => {
    const before = await startTestApp({}, database);
    const assertion = await register(before);
    const token = await accessToken(before, assertion);
    const keysBefore = await kids(before);
    await before.close();

    const after = await startTestApp({}, database);
    try {
      expect(await kids(after)).toEqual(keysBefore);
      expect((await submit(after, token)).status).toBe(201);
      expect((await exchange(after, assertion)).status).toBe(200);
    } finally {
      await after.close();
    }
  });

  // Several instances behind a load balancer must behave as one; on PostgreSQL, as deployed.
  describeIf(['postgres'])('two instances at once', () => {
    let a: TestApp;
    let b: TestApp;
    beforeEach(async () => {
      a = await startTestApp({}, database);
      b = await startTestApp({}, database);
    });
    afterEach(async () => {
      await a.close();
      await b.close();
    });

    it('share signing keys: what one issues, the other accepts', async () => {
      expect(await kids(b)).toEqual(await kids(a));
      const assertion = await register(a);
      const token = await accessToken(b, assertion);
      expect((await submit(a, token)).status).toBe(201);
      expect((await submit(b, token)).status).toBe(201);
    });

    it('refuse on one instance a token revoked on the other, at once', async () => {
      const assertion = await register(a);
      const token = await accessToken(a, assertion);
      expect((await submit(b, token)).status).toBe(201);
      const revoked = await a.http.post('/oauth2/revoke').type('form').send({ token }).then(expectContract);
      expect(revoked.status).toBe(200);
      const refused = await submit(b, token);
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('invalid_token');
    });

    it('refuse everything of a registration revoked on the other instance', async () => {
      const assertion = await register(a);
      const token = await accessToken(b, assertion);
      await b.http.post('/oauth2/revoke').type('form').send({ token: assertion, token_type_hint: 'identity_assertion' }).then(expectContract);
      expect((await submit(a, token)).status).toBe(401);
      const exchanged = await exchange(a, assertion);
      expect(exchanged.status).toBe(400);
      expect(exchanged.body.error).toBe('invalid_grant');
    });

    it('see a key rotation made on the other: new keys published and accepted, old tokens still valid', async () => {
      const assertion = await register(a);
      const oldToken = await accessToken(a, assertion);
      const oldKids = await kids(b);

      const created = await a.app.get(KeyStore).rotate();
      expect(created).toHaveLength(2);
      const newToken = await accessToken(a, await register(a));
      expect(created).toContain(decodeProtectedHeader(newToken).kid);

      expect(await kids(b)).toEqual([...oldKids, ...created]);
      expect((await submit(b, newToken)).status).toBe(201);
      expect((await submit(b, oldToken)).status).toBe(201);
      expect((await exchange(b, assertion)).status).toBe(200);
    });
  });

  it('rotates keys from the command line (npm run keys:rotate) for every instance', async () => {
    const t = await startTestApp({}, database);
    try {
      const before = await kids(t);
      const result = spawnSync(process.execPath, ['dist/src/oauth/rotate-keys.js'], {
        env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...database.env },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const after = await kids(t);
      expect(after).toHaveLength(before.length + 2);
      expect(after.slice(0, before.length)).toEqual(before);
      // The running instance signs with the new keys once it looks again; tokens of the old keys stay valid meanwhile.
      const token = await accessToken(t, await register(t));
      expect((await submit(t, token)).status).toBe(201);
    } finally {
      await t.close();
    }
  });

  it('keys:rotate with another secrets key refuses, and adds no key that the instances could not open', async () => {
    const t = await startTestApp({}, database);
    try {
      const before = await kids(t);
      const result = spawnSync(process.execPath, ['dist/src/oauth/rotate-keys.js'], {
        env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...database.env, SECRETS_KEY: randomBytes(32).toString('hex') },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('The signing keys in the database were sealed with another secrets key than this one');
      expect(await kids(t)).toEqual(before);
    } finally {
      await t.close();
    }
  });
});
