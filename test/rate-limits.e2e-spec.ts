import { randomInt } from 'node:crypto';
import { parseItem, parseList } from 'structured-headers';
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import { In } from 'typeorm';
import { AgentRegistration } from '../src/identity/agent-registration.entity.js';
import { KeyStore } from '../src/oauth/key-store.service.js';
import { expectContract } from './support/contract.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';
import { describeIf } from './support/skips.js';

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
  return (await agent(t, ip)).token;
}

describe('rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      RATE_LIMIT_ANONYMOUS: '3/60s',
      RATE_LIMIT_AGENT: '30/60s',
      RATE_LIMIT_REGISTRATION: '5/3600s',
      RATE_LIMIT_TOKEN: '4/60s',
    });
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

    const token = () =>
      t.http
        .post('/oauth2/token')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ grant_type: JWT_BEARER, assertion: answers[0].body.identity_assertion })
        .then(expectContract);
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
    const t = await startTestApp({
      API_DEPRECATIONS: JSON.stringify([{ path: '/api/v1/sandbox', deprecation: '2026-06-01T12:00:00Z', link: 'https://example.com/v2' }]),
    });
    try {
      const sandbox = await t.http.post('/api/v1/sandbox').send(LEAD).then(expectContract);
      expect(sandbox.headers['deprecation']).toBe(`@${Date.parse('2026-06-01T12:00:00Z') / 1000}`);
      expect(sandbox.headers['sunset']).toBeUndefined();
      expect(sandbox.headers['link']).toBe(
        '<http://leads.test/docs/api-versioning>; rel="deprecation"; type="text/html", <https://example.com/v2>; rel="deprecation"',
      );
      const lead = await t.http.post('/api/v1/lead').send(LEAD).then(expectContract);
      expect(lead.headers['deprecation']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

// Needs a Redis server (TEST_REDIS_URL; CI always names one).
describeIf(['redis'])('rate limits shared through Redis', () => {
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
    [a, b] = await twoInstancesOnRedis(env, database);
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

// Needs a Redis server (TEST_REDIS_URL; CI always names one).
describeIf(['redis'])('REDIS_KEY_PREFIX: deployments that share a Redis', () => {
  // Prefixes of this run only, so that runs sharing the Redis never meet.
  const run = `e2e-${process.pid}-${randomInt(1e9)}`;
  const [blue, green] = [`${run}-blue:`, `${run}-green:`];
  let database: TestDatabase;
  let blueA: TestApp;
  let blueB: TestApp;
  let greenA: TestApp;
  let redis: Redis;
  beforeAll(async () => {
    database = await freshDatabase();
    const env = { TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '2/60s', REDIS_URL: REDIS_URL! };
    [blueA, blueB] = await twoInstancesOnRedis({ ...env, REDIS_KEY_PREFIX: blue }, database);
    greenA = await startTestApp({ ...env, REDIS_KEY_PREFIX: green }, database);
    await waitFor(async () => (await greenA.http.get('/api/v1/health')).body.checks?.redis === 'up');
    redis = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    await Promise.all([blueA.close(), blueB.close(), greenA.close()]);
    redis.disconnect();
    await database.drop();
  });

  const lead = (t: TestApp, ip: string) => t.http.post('/api/v1/lead').set('X-Forwarded-For', ip).send(LEAD).then(expectContract);

  it('counts one quota within a prefix and a quota of its own under another, and writes every key under its prefix', async () => {
    const ip = clientIp();
    const statuses = [];
    for (const t of [blueA, blueB, greenA, blueA, greenA, blueB, greenA]) statuses.push((await lead(t, ip)).status);
    // blue (two instances, one prefix): 201 201, then 429s; green: its own 2, untouched by blue's.
    expect(statuses).toEqual([201, 201, 201, 429, 201, 429, 429]);
    const keys = (await redis.keys(`*${ip}*`)).sort();
    expect(keys).toEqual([`${blue}ratelimit:anonymous:${ip}`, `${green}ratelimit:anonymous:${ip}`]);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every member of the RateLimit and RateLimit-Policy lists, by policy name, read with a structured-field parser. */
function rateLimits(res: Response): Record<string, { q: unknown; w: unknown; r: unknown; t: unknown }> {
  const policies = parseList(String(res.headers['ratelimit-policy']));
  const states = parseList(String(res.headers['ratelimit']));
  expect(states.map(([name]) => name)).toEqual(policies.map(([name]) => name));
  return Object.fromEntries(
    policies.map(([name, policy], i) => [name, { q: policy.get('q'), w: policy.get('w'), r: states[i][1].get('r'), t: states[i][1].get('t') }]),
  );
}

/** Registers an agent from `ip` and exchanges its assertion; both calls come from that address. */
async function agent(t: TestApp, ip: string, body: object = { type: 'anonymous' }): Promise<{ id: string; assertion: string; token: string }> {
  const registered = await t.http.post('/api/v1/agent/identity').set('X-Forwarded-For', ip).send(body).then(expectContract);
  expect(registered.status).toBe(200);
  const token = await t.http
    .post('/oauth2/token')
    .set('X-Forwarded-For', ip)
    .type('form')
    .send({ grant_type: JWT_BEARER, assertion: registered.body.identity_assertion })
    .then(expectContract);
  return { id: registered.body.registration_id, assertion: registered.body.identity_assertion, token: token.body.access_token };
}

/** The liveness queries of bearer tokens the application sends to its database (spied on the one DataSource). */
function livenessQueries(t: TestApp): { count(): number; restore(): void } {
  const spy = jest.spyOn(t.dataSource, 'query');
  return {
    count: () => spy.mock.calls.filter(([sql]) => /agent_registrations/.test(String(sql)) && /revoked_tokens/.test(String(sql))).length,
    restore: () => spy.mockRestore(),
  };
}

describe('failed authentication spends the anonymous budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '3/60s', RATE_LIMIT_AGENT: '30/60s' });
  });
  afterAll(() => t.close());

  const lead = (ip: string, authorization?: string) => {
    const req = t.http.post('/api/v1/lead').set('X-Forwarded-For', ip);
    if (authorization) req.set('Authorization', authorization);
    return req.send(LEAD).then(expectContract);
  };

  it('answers a revoked token 401 with the anonymous RateLimit fields counting down, then 429 with Retry-After, querying the database once', async () => {
    const holder = await agent(t, clientIp());
    const ip = clientIp();
    expect((await lead(ip, `Bearer ${holder.token}`)).status).toBe(201);
    const revoked = await t.http.post('/oauth2/revoke').set('X-Forwarded-For', clientIp()).type('form').send({ token: holder.token }).then(expectContract);
    expect(revoked.status).toBe(200);

    const queries = livenessQueries(t);
    try {
      const answers: Response[] = [];
      for (let i = 0; i < 5; i++) answers.push(await lead(ip, `Bearer ${holder.token}`));
      expect(answers.map((res) => res.status)).toEqual([401, 401, 401, 429, 429]);
      answers.slice(0, 3).forEach((res, i) => {
        expect(res.body).toMatchObject({ code: 'invalid_token', detail: 'The access token has been revoked.' });
        expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
        expect(rateLimit(res)).toMatchObject({ name: 'anonymous', q: 3, w: 60, r: 2 - i });
      });
      const refused = answers[3];
      expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
      const retryAfter = Number(refused.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(rateLimit(refused)).toMatchObject({ name: 'anonymous', r: 0 });
      // One lookup found the token revoked; the other four were refused from memory.
      expect(queries.count()).toBe(1);
    } finally {
      queries.restore();
    }
    // The address's anonymous budget is the one that was spent.
    expect((await lead(ip)).status).toBe(429);
  });

  it('counts malformed and forged tokens, and once the budget is spent refuses a new token before any signature check or query', async () => {
    const ip = clientIp();
    const forged = (n: number) => `Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJyZWdfJHtufSJ9.${'A'.repeat(40)}${n}`;
    const first = await lead(ip, 'Bearer not a token');
    const second = await lead(ip, 'Basic dXNlcjpwYXNz');
    const third = await lead(ip, forged(1));
    expect([first, second, third].map((res) => [res.status, rateLimit(res).r])).toEqual([
      [401, 2],
      [401, 1],
      [401, 0],
    ]);

    const verify = jest.spyOn(t.app.get(KeyStore), 'verificationKey');
    const queries = livenessQueries(t);
    try {
      const refused = await lead(ip, forged(2));
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(rateLimit(refused)).toMatchObject({ name: 'anonymous', r: 0 });
      expect(verify).not.toHaveBeenCalled();
      expect(queries.count()).toBe(0);
    } finally {
      verify.mockRestore();
      queries.restore();
    }
    // Another address is unaffected.
    const other = await lead(clientIp(), forged(3));
    expect([other.status, rateLimit(other).r]).toEqual([401, 2]);
  });

  it('lets a token already verified here go on under the agent tier from an address whose failures spent its budget', async () => {
    const ip = clientIp();
    const { token } = await agent(t, ip);
    expect((await lead(ip, `Bearer ${token}`)).status).toBe(201);
    for (let i = 0; i < 4; i++) expect((await lead(ip, 'Bearer garbage')).status).toBe(i < 3 ? 401 : 429);
    const served = await lead(ip, `Bearer ${token}`);
    expect(served.status).toBe(201);
    expect(rateLimit(served)).toMatchObject({ name: 'agent', r: 28 });
  });
});

describe('identity ceiling: the live registrations of one address share one agent budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '1/60s', RATE_LIMIT_AGENT: '10/60s', RATE_LIMIT_AGENT_PER_ADDRESS: '15/60s' });
  });
  afterAll(() => t.close());

  const sandbox = (token: string) =>
    t.http.post('/api/v1/sandbox').set('X-Forwarded-For', clientIp()).set('Authorization', `Bearer ${token}`).send(LEAD).then(expectContract);

  it('stores the registering address and stops the tokens of its registrations together at the ceiling, each with budget left', async () => {
    const ip = clientIp();
    const agents = [await agent(t, ip), await agent(t, ip), await agent(t, ip)];
    const stored = await t.dataSource.getRepository(AgentRegistration).findBy({ id: In(agents.map((a) => a.id)) });
    expect(stored.map((row) => row.registeredFrom)).toEqual([ip, ip, ip]);

    const answers: Response[] = [];
    for (let i = 0; i < 18; i++) answers.push(await sandbox(agents[i % 3].token));
    expect(answers.map((res) => res.status)).toEqual([...Array(15).fill(200), 429, 429, 429]);
    expect(rateLimits(answers[0])).toEqual({
      agent: { q: 10, w: 60, r: 9, t: expect.any(Number) },
      agent_per_address: { q: 15, w: 60, r: 14, t: expect.any(Number) },
    });
    const refused = answers[15];
    expect(refused.body).toMatchObject({ code: 'rate_limited', detail: expect.stringContaining('"agent_per_address"') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The first token has made 6 requests of its own 10: its own budget is not what stopped it.
    expect(rateLimits(refused)).toMatchObject({ agent: { r: 4 }, agent_per_address: { r: 0 } });
  });

  it('leaves a registration made from another address unaffected', async () => {
    const ip = clientIp();
    const crowd = [await agent(t, ip), await agent(t, ip)];
    for (let i = 0; i < 16; i++) await sandbox(crowd[i % 2].token);
    expect((await sandbox(crowd[0].token)).status).toBe(429);

    const other = await agent(t, clientIp());
    const served = await sandbox(other.token);
    expect(served.status).toBe(200);
    expect(rateLimits(served)).toMatchObject({ agent: { r: 9 }, agent_per_address: { r: 14 } });
  });

  it('puts identity_assertion registrations under the same ceiling: a self-reported e-mail costs no more to mint', async () => {
    const ip = clientIp();
    const asserted = { type: 'identity_assertion', assertion_type: 'verified_email', assertion: 'agente@exemplo.com.br' };
    const agents = [await agent(t, ip, asserted), await agent(t, ip)];
    const statuses = [];
    for (let i = 0; i < 16; i++) statuses.push((await sandbox(agents[i % 2].token)).status);
    expect(statuses).toEqual([...Array(15).fill(200), 429]);
  });

  it('keeps a refreshed anonymous identity under the ceiling of the address it registered from, wherever it refreshes', async () => {
    const ip = clientIp();
    const registered = await t.http.post('/api/v1/agent/identity').set('X-Forwarded-For', ip).send({ type: 'anonymous' }).then(expectContract);
    const refreshed = await t.http
      .post('/api/v1/agent/identity')
      .set('X-Forwarded-For', clientIp())
      .send({ type: 'refresh', refresh_token: registered.body.refresh_token })
      .then(expectContract);
    expect(refreshed.body.registration_id).toBe(registered.body.registration_id);
    const token = await t.http
      .post('/oauth2/token')
      .set('X-Forwarded-For', clientIp())
      .type('form')
      .send({ grant_type: JWT_BEARER, assertion: refreshed.body.identity_assertion })
      .then(expectContract);
    const other = await agent(t, ip);
    const statuses = [];
    for (let i = 0; i < 16; i++) statuses.push((await sandbox(i % 2 ? other.token : token.body.access_token)).status);
    expect(statuses).toEqual([...Array(15).fill(200), 429]);
  });

  it('counts only live registrations: a revoked one no longer makes requests, so it spends nothing', async () => {
    const ip = clientIp();
    const [gone, kept] = [await agent(t, ip), await agent(t, ip)];
    expect((await sandbox(gone.token)).status).toBe(200);
    const revoked = await t.http.post('/oauth2/revoke').set('X-Forwarded-For', clientIp()).type('form').send({ token: gone.assertion }).then(expectContract);
    expect(revoked.status).toBe(200);
    expect((await sandbox(gone.token)).status).toBe(401);
    const served = await sandbox(kept.token);
    expect(served.status).toBe(200);
    expect(rateLimits(served)).toMatchObject({ agent_per_address: { r: 13 } });
  });
});

// Needs a Redis server (TEST_REDIS_URL; CI always names one): both counters of an agent request in one script.
describeIf(['redis'])('identity ceiling shared through Redis', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    database = await freshDatabase();
    const env = { TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '1/60s', RATE_LIMIT_AGENT: '10/60s', RATE_LIMIT_AGENT_PER_ADDRESS: '12/60s', REDIS_URL: REDIS_URL! };
    [a, b] = await twoInstancesOnRedis(env, database);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('enforces one ceiling per registering address across two instances', async () => {
    const ip = clientIp();
    const agents = [await agent(a, ip), await agent(b, ip)];
    const statuses = [];
    for (let i = 0; i < 14; i++) {
      const t = i % 2 ? b : a;
      statuses.push(
        (
          await t.http
            .post('/api/v1/sandbox')
            .set('X-Forwarded-For', clientIp())
            .set('Authorization', `Bearer ${agents[(i >> 1) % 2].token}`)
            .send(LEAD)
            .then(expectContract)
        ).status,
      );
    }
    expect(statuses).toEqual([...Array(12).fill(200), 429, 429]);
  });
});

/** Two instances on one database and one Redis, once both count in Redis. */
async function twoInstancesOnRedis(env: Record<string, string>, database: TestDatabase): Promise<[TestApp, TestApp]> {
  const a = await startTestApp(env, database);
  const b = await startTestApp(env, database);
  const redisUp = async (t: TestApp) => (await t.http.get('/api/v1/health')).body.checks?.redis === 'up';
  await waitFor(async () => (await redisUp(a)) && (await redisUp(b)));
  return [a, b];
}
