/** @database form tokens are spent in form_tokens_spent */
import { randomInt } from 'node:crypto';
import { parseList } from 'structured-headers';
import { FormTokens } from '../src/forms/form-tokens.service.js';
import { expectContract } from './support/contract.js';
import { startTestApp, TestApp } from './support/test-app.js';

/** A client address of its own for each test, so that counters (in Redis, when shared) never collide. */
const clientIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function rateLimit(header: unknown) {
  const [[name, params]] = parseList(String(header));
  return { name, ...Object.fromEntries(params) };
}

describe('GET /forms/token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_FORM_TOKEN: '3/60s', RATE_LIMIT_ANONYMOUS: '3/60s', RATE_LIMIT_AGENT: '30/60s' });
  });
  afterAll(() => t.close());

  const token = (ip: string) => t.http.get('/forms/token').set('X-Forwarded-For', ip).set('Origin', 'https://cliente.example').then(expectContract);

  it('answers a fresh token, uncacheable and readable from any origin, with no captcha when none is configured', async () => {
    const before = Date.now();
    const res = await token(clientIp());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual(['captcha', 'expires_at', 'token']);
    expect(res.body.captcha).toBeNull();
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{40,60}$/);
    const expires = Date.parse(res.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);
    const again = await token(clientIp());
    expect(again.body.token).not.toBe(res.body.token);
  });

  it('gives tokens the service redeems once: too fast at once, valid after 3 s, invalid the second time', async () => {
    const tokens = t.app.get(FormTokens);
    const first = (await token(clientIp())).body;
    expect(await tokens.redeem(first.token)).toBe('too_fast');
    expect(await tokens.redeem(first.token)).toBe('invalid');
    const second = (await token(clientIp())).body;
    const later = new Date(Date.now() + 3_500);
    expect(await tokens.redeem(second.token, later)).toBe('valid');
    expect(await tokens.redeem(second.token, later)).toBe('invalid');
    expect(await tokens.redeem(`${second.token.slice(0, -1)}${second.token.endsWith('A') ? 'B' : 'A'}`, later)).toBe('invalid');
  });

  it('has its own per-address quota: 429 with Retry-After once spent, other addresses and the lead quota untouched', async () => {
    const ip = clientIp();
    for (let i = 0; i < 3; i++) {
      const res = await token(ip);
      expect(res.status).toBe(200);
      expect(rateLimit(res.headers['ratelimit-policy'])).toEqual({ name: 'form_token', q: 3, w: 60 });
      expect(rateLimit(res.headers['ratelimit'])).toMatchObject({ name: 'form_token', r: 2 - i });
    }
    const refused = await token(ip);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(refused.body).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused.body.detail).toContain('"form_token"');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['cache-control']).not.toBe('no-store'); // a problem, not a token
    expect(refused.body.token).toBeUndefined();

    expect((await token(clientIp())).status).toBe(200);
    const lead = await t.http.post('/api/v1/lead').set('X-Forwarded-For', ip).send({ nome: 'Ana', email: 'ana@exemplo.com' }).then(expectContract);
    expect(lead.status).toBe(201);
    expect(rateLimit(lead.headers['ratelimit'])).toMatchObject({ name: 'anonymous', r: 2 });
  });

  it('ignores the Authorization header: a bad token is neither refused nor charged', async () => {
    const res = await t.http.get('/forms/token').set('X-Forwarded-For', clientIp()).set('Authorization', 'Bearer not-a-token').then(expectContract);
    expect(res.status).toBe(200);
    expect(rateLimit(res.headers['ratelimit'])).toMatchObject({ name: 'form_token', r: 2 });
  });

  it("lets a customer's page send a lead with the form script's headers (CORS preflight)", async () => {
    const res = await t.http
      .options('/api/v1/lead')
      .set('Origin', 'https://cliente.example')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,idempotency-key,form-token,form-trap,captcha-token');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const allowed = String(res.headers['access-control-allow-headers'])
      .toLowerCase()
      .split(',')
      .map((name) => name.trim());
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'idempotency-key', 'form-token', 'form-trap', 'captcha-token']));
  });
});

describe('GET /forms/token with a captcha provider', () => {
  let t: TestApp;
  const SECRET = '1x0000000000000000000000000000000AA';
  beforeAll(async () => {
    t = await startTestApp({
      CAPTCHA_PROVIDER: 'hcaptcha',
      CAPTCHA_SECRET: SECRET,
      CAPTCHA_SITE_KEY: '10000000-ffff-ffff-ffff-000000000001',
      CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
    });
  });
  afterAll(() => t.close());

  it('names the widget to render (provider, site key, script), never the secret or the verify URL', async () => {
    const res = await t.http.get('/forms/token').then(expectContract);
    expect(res.status).toBe(200);
    expect(res.body.captcha).toEqual({
      provider: 'hcaptcha',
      site_key: '10000000-ffff-ffff-ffff-000000000001',
      script_url: 'https://js.hcaptcha.com/1/api.js?render=explicit',
    });
    expect(res.text).not.toContain(SECRET);
    expect(res.text).not.toContain('siteverify');
  });
});
