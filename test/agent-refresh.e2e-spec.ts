/** @database refresh tokens: rotation, reuse, restarts */
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { Response } from 'supertest';
import { expectContract } from './support/contract.js';
import { freshDatabase, ON_POSTGRES, startTestApp, TestApp, TestDatabase } from './support/test-app.js';

/**
 * Identity continuity (docs/decisions/0030-agent-refresh-tokens.md): rotating refresh tokens at
 * POST /api/v1/agent/identity, reuse detection, the grace period, revocation, expiry, and one rotation among
 * concurrent requests on two instances sharing the database.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const REFRESHED_KEYS = ['assertion_expires', 'identity_assertion', 'refresh_token', 'refresh_token_expires', 'registration_id', 'registration_type', 'scopes'];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sql = (text: string) => (ON_POSTGRES ? text : text.replace(/\$\d+/g, '?'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const register = (t: TestApp, body: object = { type: 'anonymous' }) => t.http.post('/api/v1/agent/identity').send(body).then(expectContract);
const refresh = (t: TestApp, refreshToken: unknown) =>
  t.http.post('/api/v1/agent/identity').send({ type: 'refresh', refresh_token: refreshToken }).then(expectContract);
const exchange = (t: TestApp, assertion: string) => t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion }).then(expectContract);
const revoke = (t: TestApp, form: Record<string, string>) => t.http.post('/oauth2/revoke').type('form').send(form).then(expectContract);
const submit = (t: TestApp, token: string) =>
  t.http.post('/api/v1/lead').set('Authorization', `Bearer ${token}`).send({ nome: 'Ana', email: 'ana@exemplo.com' }).then(expectContract);
const tokenRows = (t: TestApp, registrationId: string) =>
  t.dataSource.query(sql('SELECT * FROM agent_refresh_tokens WHERE registration_id = $1 ORDER BY created_at'), [registrationId]) as Promise<
    Record<string, unknown>[]
  >;
const revokedAt = async (t: TestApp, id: string) =>
  ((await t.dataSource.query(sql('SELECT revoked_at FROM agent_registrations WHERE id = $1'), [id])) as { revoked_at: unknown }[])[0].revoked_at;

function expectRefreshed(res: Response, registrationId: string): void {
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(Object.keys(res.body).sort()).toEqual(REFRESHED_KEYS);
  expect(res.body.registration_id).toBe(registrationId);
  expect(res.body.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
  expect(decodeJwt(res.body.identity_assertion).sub).toBe(registrationId);
}

function expectInvalidRefreshToken(res: Response): void {
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.body).toMatchObject({ code: 'invalid_refresh_token', status: 400, instance: '/api/v1/agent/identity' });
}

describe('agent refresh tokens', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('come with every registration, anonymous included, stored only as SHA-256, 30 days by default', async () => {
    for (const body of [{ type: 'anonymous' }, { type: 'identity_assertion', assertion_type: 'verified_email', assertion: 'ops@exemplo.com.br' }]) {
      const res = await register(t, body);
      expect(res.status).toBe(200);
      const { refresh_token: token, refresh_token_expires: expires, registration_id: id } = res.body;
      expect(token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
      expect(Math.abs(Date.parse(expires) - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
      const rows = await tokenRows(t, id);
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toBe(sha256(token));
      expect(JSON.stringify(rows)).not.toContain(token.slice(3));
    }
  });

  it('renew the same registration with a new assertion and a rotated token; the old one is spent', async () => {
    const reg = await register(t, { type: 'anonymous', client_name: 'refresh-e2e' });
    const first = await refresh(t, reg.body.refresh_token);
    expectRefreshed(first, reg.body.registration_id);
    expect(first.body.registration_type).toBe('anonymous');
    expect(first.body.refresh_token).not.toBe(reg.body.refresh_token);
    expect(first.body.identity_assertion).not.toBe(reg.body.identity_assertion);
    expect(Date.parse(first.body.assertion_expires)).toBeGreaterThan(Date.now() + 3500_000);
    const exchanged = await exchange(t, first.body.identity_assertion);
    expect(exchanged.status).toBe(200);
    expect(decodeJwt(exchanged.body.access_token)).toMatchObject({ sub: reg.body.registration_id, client_id: reg.body.registration_id });
    expect((await submit(t, exchanged.body.access_token)).status).toBe(201);

    const second = await refresh(t, first.body.refresh_token);
    expectRefreshed(second, reg.body.registration_id);
    const rows = await tokenRows(t, reg.body.registration_id);
    expect(rows.map((row) => row.token_hash)).toEqual([reg.body.refresh_token, first.body.refresh_token, second.body.refresh_token].map(sha256));
    expect(rows.map((row) => row.rotated_at !== null)).toEqual([true, true, false]);
  });

  it('give a spent token, within the grace period, the same successor and a valid assertion', async () => {
    const reg = await register(t);
    const first = await refresh(t, reg.body.refresh_token);
    const again = await refresh(t, reg.body.refresh_token);
    expectRefreshed(again, reg.body.registration_id);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    expect(again.body.refresh_token_expires).toBe(first.body.refresh_token_expires);
    expect((await exchange(t, again.body.identity_assertion)).status).toBe(200);
    expect(await tokenRows(t, reg.body.registration_id)).toHaveLength(2);
    expectRefreshed(await refresh(t, again.body.refresh_token), reg.body.registration_id);
  });

  it('rotate once among concurrent refreshes of one token: all get the same successor', async () => {
    const reg = await register(t);
    const answers = await Promise.all(Array.from({ length: 6 }, () => refresh(t, reg.body.refresh_token)));
    for (const res of answers) expectRefreshed(res, reg.body.registration_id);
    expect(new Set(answers.map((res) => res.body.refresh_token)).size).toBe(1);
    expect(await tokenRows(t, reg.body.registration_id)).toHaveLength(2);
  });

  it('cannot renew a revoked registration', async () => {
    const reg = await register(t);
    expect((await revoke(t, { token: reg.body.identity_assertion, token_type_hint: 'identity_assertion' })).status).toBe(200);
    expectInvalidRefreshToken(await refresh(t, reg.body.refresh_token));
  });

  it('are revoked by RFC 7009 with token_type_hint=refresh_token, and with them the registration and its tokens', async () => {
    const reg = await register(t);
    const next = await refresh(t, reg.body.refresh_token);
    const access = (await exchange(t, next.body.identity_assertion)).body.access_token;
    expect((await submit(t, access)).status).toBe(201);
    const revoked = await revoke(t, { token: next.body.refresh_token, token_type_hint: 'refresh_token' });
    expect(revoked.status).toBe(200);
    expect(revoked.text).toBe('');
    expect(await revokedAt(t, reg.body.registration_id)).not.toBeNull();
    expectInvalidRefreshToken(await refresh(t, next.body.refresh_token));
    expect((await submit(t, access)).status).toBe(401);
    expect((await exchange(t, next.body.identity_assertion)).body.error).toBe('invalid_grant');
    // Unknown refresh tokens get the same empty 200.
    expect((await revoke(t, { token: 'rt_unknown', token_type_hint: 'refresh_token' })).status).toBe(200);
  });

  it('refuse unknown tokens with 400 invalid_refresh_token and malformed requests with 422', async () => {
    expectInvalidRefreshToken(await refresh(t, `rt_${'A'.repeat(43)}`));
    expectInvalidRefreshToken(await refresh(t, 'not even ours'));
    for (const [body, pointer, code] of [
      [{ type: 'refresh' }, '/refresh_token', 'required'],
      [{ type: 'refresh', refresh_token: 42 }, '/refresh_token', 'invalid_type'],
      [{ type: 'refresh', refresh_token: '' }, '/refresh_token', 'too_short'],
      [{ type: 'refresh', refresh_token: 'x'.repeat(513) }, '/refresh_token', 'too_long'],
      [{ type: 'refresh', refresh_token: 'rt_x', client_name: 'no' }, '/client_name', 'unknown_field'],
    ] as const) {
      const res = await t.http.post('/api/v1/agent/identity').send(body).then(expectContract);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ pointer, code, detail: expect.any(String) }]);
    }
  });
});

describe('agent refresh tokens without a grace period', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ AGENT_REFRESH_GRACE: '0s' });
  });
  afterAll(() => t.close());

  it('detect reuse: a spent token revokes the registration with its whole family, even the newest token', async () => {
    const reg = await register(t);
    const access = (await exchange(t, reg.body.identity_assertion)).body.access_token;
    const first = await refresh(t, reg.body.refresh_token);
    const second = await refresh(t, first.body.refresh_token);
    expectRefreshed(second, reg.body.registration_id);
    expectInvalidRefreshToken(await refresh(t, reg.body.refresh_token));
    expect(await revokedAt(t, reg.body.registration_id)).not.toBeNull();
    expectInvalidRefreshToken(await refresh(t, second.body.refresh_token));
    expect((await exchange(t, second.body.identity_assertion)).body.error).toBe('invalid_grant');
    expect((await submit(t, access)).status).toBe(401);
  });
});

describe('agent refresh tokens living 1 second', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ AGENT_REFRESH_TOKEN_TTL: '1s' });
  });
  afterAll(() => t.close());

  it('refuse an expired token, without revoking the registration', async () => {
    const reg = await register(t);
    expect(Date.parse(reg.body.refresh_token_expires) - Date.now()).toBeLessThanOrEqual(1000);
    await sleep(1100);
    expectInvalidRefreshToken(await refresh(t, reg.body.refresh_token));
    expect(await revokedAt(t, reg.body.registration_id)).toBeNull();
    expect((await exchange(t, reg.body.identity_assertion)).status).toBe(200);
  });
});

describe('agent refresh tokens on two instances sharing one database', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    database = await freshDatabase();
    a = await startTestApp({}, database);
    b = await startTestApp({}, database);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('rotate exactly once when both refresh one token at once; the other gets the same successor', async () => {
    for (let round = 0; round < 5; round++) {
      const reg = await register(a);
      const answers = await Promise.all([refresh(a, reg.body.refresh_token), refresh(b, reg.body.refresh_token), refresh(b, reg.body.refresh_token)]);
      for (const res of answers) expectRefreshed(res, reg.body.registration_id);
      expect(new Set(answers.map((res) => res.body.refresh_token)).size).toBe(1);
      expect(await tokenRows(a, reg.body.registration_id)).toHaveLength(2);
      // Either instance takes the successor, and its assertion.
      expectRefreshed(await refresh(round % 2 ? a : b, answers[0].body.refresh_token), reg.body.registration_id);
      expect((await exchange(round % 2 ? b : a, answers[1].body.identity_assertion)).status).toBe(200);
    }
  });

  it('refuse on one instance what the other revoked', async () => {
    const reg = await register(a);
    const next = await refresh(b, reg.body.refresh_token);
    expect((await revoke(a, { token: next.body.refresh_token, token_type_hint: 'refresh_token' })).status).toBe(200);
    expectInvalidRefreshToken(await refresh(b, next.body.refresh_token));
  });
});
