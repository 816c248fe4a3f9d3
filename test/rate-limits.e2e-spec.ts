import { randomInt } from 'node:crypto';
import { parseItem, parseList } from 'structured-headers';
import type { Response } from 'supertest';
import { expectContract } from './support/contract.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';

const LEAD = { nome: 'Ana', email: 'ana@exemplo.com' };
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const REDIS_URL = process.env.TEST_REDIS_URL;

/** A client address of its own for each test, so that counters (in Redis, shared by every run) never collide. */
const clientIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** The RateLimit and RateLimit-Policy fields read with a structured-field parser, as a client would. */
function rateLimit(res: Response) {
  const [[policyName, policy]] = parseList(String(res.headers['ratelimit-policy']));
  const [[name, state]] = parseList(String(res.headers['ratelimit']));
  expect(typeof policyName).toBe('string'); // a quoted sf-string, not a token
  expect(name).toBe(policyName);
  return { name: name as string, q: policy.get('q'), w: policy.get('w'), r: state.get('r'), t: state.get('t') as number };
}

async function agentToken(t: TestApp, ip: string): Promise<string> {
  const registered = await t.http.post('/api/v1/agent/identity').set('X-Forwarded-For', ip).send({ type: 'anonymous' }).then(expectContract);
  const token = await t.http
    .post('/oauth2/token')
    .set('X-Forwarded-For', ip)
    .type('form')
    .send({ grant_type: JWT_BEARER, assertion: registered.body.identity_assertion })
    .then(expectContract);
  return token.body.access_token;
}

describe('rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '3/60s', RATE_LIMIT_AGENT: '30/60s', RATE_LIMIT_REGISTRATION: '5/3600s', RATE_LIMIT_TOKEN: '4/60s' });
  });
  afterAll(() => t.close());

  const lead = (ip: string, token?: string) => {
    const req = t.http.post('/api/v1/lead').set('X-Forwarded-For', ip);
    if (token) req.set('Authorization', `Bearer ${token}`);
    return req.send(LEAD).then(expectContract);
  };

  it('reports the anonymous policy and what is left on every limited response, success or error', async () => {
    const ip = clientIp();
    const first = await lead(ip);
    expect(first.status).toBe(201);
    expect(rateLimit(first)).toEqual({ name: 'anonymous', q: 3, w: 60, r: 2, t: expect.any(Number) });
    expect(rateLimit(first).t).toBeGreaterThan(0);
    expect(rateLimit(first).t).toBeLessThanOrEqual(60);
    const invalid = await t.http.post('/api/v1/sandbox').set('X-Forwarded-For', ip).send({ nome: '' }).then(expectContract);
    expect(invalid.status).toBe(422);
    expect(rateLimit(invalid)).toMatchObject({ name: 'anonymous', r: 1 });
    const info = await t.http.get('/api/v1/info').set('X-Forwarded-For', ip).then(expectContract);
    expect(rateLimit(info)).toMatchObject({ name: 'anonymous', r: 0 });
    for (const res of [first, invalid, info]) {
      expect(Object.keys(res.headers).filter((h) => /^x-ratelimit|^retry-after-/.test(h))).toEqual([]);
    }
  });

  it('answers 429 rate_limited with Retry-After at the quota, while an agent with a token goes on under its own policy', async () => {
    const ip = clientIp();
    const token = await agentToken(t, ip);
    for (let i = 0; i < 3; i++) expect((await lead(ip)).status).toBe(201);
    const refused = await lead(ip);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429, type: 'http://leads.test/docs/errors#rate_limited' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(rateLimit(refused)).toMatchObject({ name: 'anonymous', r: 0 });
    expect(rateLimit(refused).t).toBeLessThanOrEqual(retryAfter);

    for (let i = 0; i < 5; i++) {
      const res = await lead(ip, token);
      expect(res.status).toBe(201);
      expect(rateLimit(res)).toMatchObject({ name: 'agent', q: 30, w: 60, r: 29 - i });
    }
  });

  it('gives agents a quota of their own by token subject, whatever their address', async () => {
    const token = await agentToken(t, clientIp());
    const a = await lead(clientIp(), token);
    const b = await lead(clientIp(), token);
    expect(rateLimit(a).r).toBe(29);
    expect(rateLimit(b).r).toBe(28);
  });

  it('limits registrations and token requests per IP with their own policies', async () => {
    const ip = clientIp();
    const register = () => t.http.post('/api/v1/agent/identity').set('X-Forwarded-For', ip).send({ type: 'anonymous' }).then(expectContract);
    const answers: Response[] = [];
    for (let i = 0; i < 6; i++) answers.push(await register());
    expect(answers.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(rateLimit(answers[0])).toMatchObject({ name: 'registration', q: 5, w: 3600, r: 4 });
    expect(answers[5].status).toBe(429);

    const token = () => t.http.post('/oauth2/token').set('X-Forwarded-For', ip).type('form').send({ grant_type: JWT_BEARER, assertion: answers[0].body.identity_assertion }).then(expectContract);
    const tokens = [];
    for (let i = 0; i < 5; i++) tokens.push(await token());
    expect(tokens.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(rateLimit(tokens[0])).toMatchObject({ name: 'token', q: 4, r: 3 });
    expect(tokens[4].status).toBe(429);
    expect(tokens[4].body).toMatchObject({ code: 'rate_limited', error: 'invalid_request' });
  });

  it('does not limit health, discovery and documentation', async () => {
    const ip = clientIp();
    for (let i = 0; i < 5; i++) expect((await lead(ip)).status).toBe(i < 3 ? 201 : 429);
    for (const path of ['/api/v1/health', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/docs/errors', '/docs/openapi-leads.json']) {
      const res = await t.http.get(path).set('X-Forwarded-For', ip).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit']).toBeUndefined();
    }
  });

  it('with TRUST_PROXY=1 keys the caller by the right-most forwarded address, whatever the client prepends', async () => {
    const real = clientIp();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await lead(`${clientIp()}, ${real}`)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
  });

  it('gives every spelling of one IPv6 address, and every address of its /64, one bucket', async () => {
    const [g1, g2] = [randomInt(0x10000), randomInt(0x10000)];
    const hex = (n: number) => n.toString(16);
    const spellings = [
      `2001:db8:${hex(g1)}:${hex(g2)}::1`,
      `2001:0DB8:${hex(g1).padStart(4, '0').toUpperCase()}:${hex(g2).padStart(4, '0')}:0000:0:0:0001`,
      `2001:db8:${hex(g1)}:${hex(g2)}:ffff:1:2:3`,
      `2001:db8:${hex(g1)}:${hex(g2)}:abcd::9`,
    ];
    const statuses = [];
    for (const address of spellings) statuses.push((await lead(address)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    // The next /64 is another subscriber.
    expect((await lead(`2001:db8:${hex(g1)}:${hex((g2 + 1) % 0x10000)}::1`)).status).toBe(201);
  });

  it('counts an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 address', async () => {
    const ip = clientIp();
    const statuses = [];
    for (const address of [ip, `::ffff:${ip}`, `::FFFF:${ip}`, `0:0:0:0:0:ffff:${ip}`]) statuses.push((await lead(address)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
  });

  it('trusts X-Forwarded-For only as far as TRUST_PROXY says', async () => {
    const direct = await startTestApp({ RATE_LIMIT_ANONYMOUS: '3/60s' });
    try {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await direct.http.post('/api/v1/lead').set('X-Forwarded-For', clientIp()).send(LEAD).then(expectContract));
      expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 429]);
    } finally {
      await direct.close();
    }
  });
});

describe('deprecation headers', () => {
  it('marks every response under a deprecated prefix, errors included, with exact values', async () => {
    const t = await startTestApp({
      API_DEPRECATIONS: JSON.stringify([{ path: '/api/v1', deprecation: '2027-01-01T00:00:00Z', sunset: '2027-07-01T00:00:00Z' }]),
    });
    try {
      for (const res of [
        await t.http.post('/api/v1/lead').send(LEAD).then(expectContract),
        await t.http.post('/api/v1/lead').send({}).then(expectContract),
        await t.http.get('/api/v1/nope').then(expectContract),
        await t.http.get('/api/v1/health').then(expectContract),
      ]) {
        expect(res.headers['deprecation']).toBe('@1798761600');
        const [date] = parseItem(res.headers['deprecation']);
        expect(date).toEqual(new Date('2027-01-01T00:00:00Z'));
        expect(res.headers['sunset']).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
        expect(res.headers['link']).toBe(
          '<http://leads.test/docs/api-versioning>; rel="deprecation"; type="text/html", <http://leads.test/docs/api-versioning>; rel="sunset"; type="text/html"',
        );
      }
      const outside = await t.http.get('/.well-known/oauth-protected-resource').then(expectContract);
      expect(outside.headers['deprecation']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('sends no deprecation headers when none is configured', async () => {
    const t = await startTestApp();
    try {
      const res = await t.http.post('/api/v1/lead').send(LEAD).then(expectContract);
      expect(['deprecation', 'sunset', 'link'].filter((h) => h in res.headers)).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('uses a configured link and omits Sunset when no sunset is set', async () => {
    const t = await startTestApp({ API_DEPRECATIONS: JSON.stringify([{ path: '/api/v1/sandbox', deprecation: '2026-06-01T12:00:00Z', link: 'https://example.com/v2' }]) });
    try {
      const sandbox = await t.http.post('/api/v1/sandbox').send(LEAD).then(expectContract);
      expect(sandbox.headers['deprecation']).toBe(`@${Date.parse('2026-06-01T12:00:00Z') / 1000}`);
      expect(sandbox.headers['sunset']).toBeUndefined();
      expect(sandbox.headers['link']).toBe('<http://leads.test/docs/api-versioning>; rel="deprecation"; type="text/html", <https://example.com/v2>; rel="deprecation"');
      const lead = await t.http.post('/api/v1/lead').send(LEAD).then(expectContract);
      expect(lead.headers['deprecation']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

// Needs a Redis server (TEST_REDIS_URL; CI always names one).
(REDIS_URL ? describe : describe.skip)('rate limits shared through Redis', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const target = new URL(REDIS_URL ?? 'redis://127.0.0.1:6379');
    proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    database = await freshDatabase();
    const env = { TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '4/60s', REDIS_URL: `redis://127.0.0.1:${proxy.port}` };
    a = await startTestApp(env, database);
    b = await startTestApp(env, database);
    await waitFor(async () => (await a.http.get('/api/v1/health')).body.checks?.redis === 'up' && (await b.http.get('/api/v1/health')).body.checks?.redis === 'up');
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await proxy.stop();
    await database.drop();
  });

  const lead = (t: TestApp, ip: string) => t.http.post('/api/v1/lead').set('X-Forwarded-For', ip).send(LEAD).then(expectContract);

  it('enforces one quota across two instances', async () => {
    const ip = clientIp();
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await lead(i % 2 ? b : a, ip)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
  });

  it('keeps answering on per-instance limits while Redis is gone, reports degraded, and shares again when it returns', async () => {
    await proxy.stop();
    const ip = clientIp();
    // Each instance now counts alone: 4 each instead of 4 together.
    const during = [];
    for (let i = 0; i < 8; i++) during.push((await lead(i % 2 ? b : a, ip)).status);
    expect(during).toEqual([201, 201, 201, 201, 201, 201, 201, 201]);
    expect((await lead(a, ip)).status).toBe(429);
    const health = await a.http.get('/api/v1/health').then(expectContract);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', checks: { database: 'up', redis: 'down' } });

    await proxy.start();
    await waitFor(async () => (await a.http.get('/api/v1/health')).body.status === 'ok' && (await b.http.get('/api/v1/health')).body.status === 'ok');
    const after = clientIp();
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await lead(i % 2 ? b : a, after)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
