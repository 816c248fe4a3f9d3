import { readFileSync } from 'node:fs';
import type { Response } from 'supertest';
import { SITE_CONTENT } from '../src/site/site.content.js';
import { expectContract } from './support/contract.js';
import { startTestApp, TestApp } from './support/test-app.js';

const VERSION: string = JSON.parse(readFileSync('package.json', 'utf8')).version;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LEAD = { nome: 'Maria da Silva', email: 'maria@empresa.com.br' };

/**
 * A CORS preflight is not an operation of the contract (OpenAPI does not describe OPTIONS handled by CORS), so
 * expectContract must refuse it as "method not in the contract"; if the contract ever documents it, use expectContract.
 */
function expectPreflightOutsideContract(res: Response): Response {
  expect(() => expectContract(res)).toThrow(/method not in the contract/);
  return res;
}

describe('meta: health, info, CORS, security headers, request ids', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('GET /api/v1/health', () => {
    it('answers 200 ok with the package version and the database up, never cached', async () => {
      const res = await t.http.get('/api/v1/health').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      const none = { pending: 0, oldest_pending_age_seconds: null };
      expect(res.body).toEqual({
        status: 'ok',
        version: VERSION,
        checks: { database: 'up' },
        outbox: { webhook: none, email: none, verification_email: none },
        webhooks: none,
      });
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const res = await t.http.head('/api/v1/health').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text ?? '').toBe('');
    });

    it('ignores the Authorization header, even an invalid one', async () => {
      const res = await t.http.get('/api/v1/health').set('Authorization', 'Bearer not-a-token').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ok');
    });
  });

  describe('GET /api/v1/info', () => {
    const expectedInfo = {
      ...SITE_CONTENT,
      links: {
        docs: 'http://leads.test/docs',
        openapi: 'http://leads.test/docs/openapi-leads.json',
        errors: 'http://leads.test/docs/errors',
        versioning: 'http://leads.test/docs/api-versioning',
        agents: 'http://leads.test/docs/agents',
        graphql: 'http://leads.test/api/v1/graphql',
        mcp: 'http://leads.test/mcp',
        mcp_server_card: 'http://leads.test/.well-known/mcp/server-card.json',
        cli: 'http://leads.test/cli/',
      },
    };

    it('answers the site content with absolute links built from PUBLIC_BASE_URL', async () => {
      const res = await t.http.get('/api/v1/info').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      // private: the answer carries this caller's RateLimit fields.
      expect(res.headers['cache-control']).toBe('private, max-age=300');
      expect(res.body).toEqual(expectedInfo);
      expect(Object.keys(res.body).sort()).toEqual(['address', 'brand', 'company', 'links', 'phone', 'trial']);
      expect(res.body).toMatchObject({
        brand: expect.any(String),
        company: expect.any(String),
        phone: expect.any(String),
        address: { street: expect.any(String), city: expect.any(String), region: expect.any(String), postal_code: expect.any(String), country: 'BR' },
      });
      expect(res.body.trial).toEqual({ days: 7, credit_card_required: false, url: expect.stringMatching(/^https:\/\/[^/]+\//) });
      for (const link of Object.values<string>(res.body.links)) expect(link.startsWith('http://leads.test/')).toBe(true);
    });

    it('never builds links from the Host or X-Forwarded-* headers', async () => {
      const res = await t.http
        .get('/api/v1/info')
        .set('Host', 'evil.example')
        .set('X-Forwarded-Host', 'evil.example')
        .set('X-Forwarded-Proto', 'https')
        .then(expectContract);
      expect(res.status).toBe(200);
      expect(res.body.links).toEqual(expectedInfo.links);
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const get = await t.http.get('/api/v1/info').then(expectContract);
      const head = await t.http.head('/api/v1/info').then(expectContract);
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(head.headers['cache-control']).toBe('private, max-age=300');
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.text ?? '').toBe('');
    });

    it('refuses other methods with 405 and Allow', async () => {
      const res = await t.http.post('/api/v1/info').set('Content-Type', 'application/json').send('{}').then(expectContract);
      expect(res.status).toBe(405);
      expect(res.body.code).toBe('method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD');
    });
  });

  describe('CORS (default CORS_ORIGINS=*)', () => {
    const EXPOSED = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Deprecation', 'Sunset', 'Link', 'X-Request-Id'];
    const list = (header: string | undefined) =>
      (header ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);

    it('lets any origin read responses and exposes the API headers', async () => {
      const res = await t.http.get('/api/v1/info').set('Origin', 'https://cliente.example').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const exposed = list(res.headers['access-control-expose-headers']);
      for (const header of EXPOSED) expect(exposed).toContain(header.toLowerCase());
    });

    it('also on problem responses, so that a web form can read its errors', async () => {
      const res = await t.http
        .post('/api/v1/lead')
        .set('Origin', 'https://cliente.example')
        .set('Content-Type', 'application/json')
        .send('{"nome": 1}')
        .then(expectContract);
      expect(res.status).toBe(422);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(list(res.headers['access-control-expose-headers'])).toContain('x-request-id');
    });

    it('allows the preflight of a JSON POST with Idempotency-Key, without credentials', async () => {
      const res = await t.http
        .options('/api/v1/lead')
        .set('Origin', 'https://cliente.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type,idempotency-key')
        .then(expectPreflightOutsideContract);
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(list(res.headers['access-control-allow-methods'])).toContain('post');
      const allowed = list(res.headers['access-control-allow-headers']);
      expect(allowed).toEqual(expect.arrayContaining(['content-type', 'idempotency-key']));
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
      expect(res.text ?? '').toBe('');
    });

    it('allows the preflight of a form’s lead with its screening headers (Captcha-Token, Form-Token, Form-Trap)', async () => {
      const res = await t.http
        .options('/api/v1/lead')
        .set('Origin', 'https://cliente.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'captcha-token,content-type,form-token,form-trap')
        .then(expectPreflightOutsideContract);
      expect(res.status).toBe(204);
      expect(list(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['captcha-token', 'form-token', 'form-trap', 'content-type']));
    });
  });

  describe('security headers (helmet)', () => {
    it.each([
      ['JSON', '/api/v1/info'],
      ['a problem', '/api/v1/nothing-here'],
      ['HTML', '/docs/errors'],
    ])('are set on %s', async (_kind, path) => {
      const res = await t.http.get(path).then(expectContract);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const csp = String(res.headers['content-security-policy']);
      const directives = Object.fromEntries(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([name, ...values]) => [name, values]),
      );
      expect(directives['script-src']).toEqual(["'self'"]);
      expect(directives['default-src']).toEqual(["'self'"]);
      expect(directives['frame-ancestors']).toEqual(["'none'"]);
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-powered-by']).toBeUndefined();
    });
  });

  describe('X-Request-Id', () => {
    const invalidLead = () => t.http.post('/api/v1/lead').set('Content-Type', 'application/json');

    it('generates a UUID when none is sent, the same in the header and the problem', async () => {
      const res = await invalidLead().send('[]').then(expectContract);
      expect(res.status).toBe(400);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
    });

    it.each([
      ['a UUID', '3f1c9a52-6a8e-4c0e-9f3b-1d2e3f4a5b6c'],
      ['a proxy-style id', 'edge-01.gru:req_42.A-b'],
      ['128 characters', 'a'.repeat(128)],
    ])('echoes a safe incoming id (%s) in the header and in problem bodies', async (_name, id) => {
      const problem = await invalidLead().set('X-Request-Id', id).send('{"nome": "Ana"}').then(expectContract);
      expect(problem.status).toBe(422);
      expect(problem.headers['x-request-id']).toBe(id);
      expect(problem.body.request_id).toBe(id);
      const notFound = await t.http.get('/api/v1/nope').set('X-Request-Id', id).then(expectContract);
      expect(notFound.status).toBe(404);
      expect(notFound.body.request_id).toBe(id);
      const ok = await t.http.get('/api/v1/health').set('X-Request-Id', id).then(expectContract);
      expect(ok.headers['x-request-id']).toBe(id);
    });

    it.each([
      ['spaces', 'my request id'],
      ['200 characters', 'b'.repeat(200)],
      ['129 characters', 'c'.repeat(129)],
      ['header injection attempt', 'abc%0d%0aSet-Cookie:x=1'],
      ['quotes and angle brackets', '<script>"x"</script>'],
    ])('replaces an unsafe incoming id (%s) with a generated UUID', async (_name, id) => {
      const res = await invalidLead().set('X-Request-Id', id).send('{"nome": "Ana"}').then(expectContract);
      expect(res.status).toBe(422);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
    });
  });
});

describe('CORS with CORS_ORIGINS set to a list', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: 'https://cliente.example, https://parceiro.example' });
  });
  afterAll(() => t.close());

  it.each(['https://cliente.example', 'https://parceiro.example'])('echoes the listed origin %s and varies on Origin', async (origin) => {
    const res = await t.http.get('/api/v1/info').set('Origin', origin).then(expectContract);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    expect(res.headers.vary).toMatch(/\bOrigin\b/i);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it.each(['https://intruso.example', 'http://cliente.example', 'https://cliente.example.evil.example', 'null'])(
    'does not allow the unlisted origin %s',
    async (origin) => {
      const res = await t.http.get('/api/v1/info').set('Origin', origin).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    },
  );

  it('answers the preflight of a listed origin and not of an unlisted one', async () => {
    const preflight = (origin: string) =>
      t.http
        .options('/api/v1/lead')
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type,idempotency-key')
        .then(expectPreflightOutsideContract);
    const listed = await preflight('https://cliente.example');
    expect(listed.headers['access-control-allow-origin']).toBe('https://cliente.example');
    expect(listed.headers['access-control-allow-credentials']).toBeUndefined();
    const unlisted = await preflight('https://intruso.example');
    expect(unlisted.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('with the database down', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await t.dataSource.destroy();
  });
  afterAll(() => t.close());

  it('health answers 503 service_unavailable with Retry-After and the degraded report inside the problem', async () => {
    const res = await t.http.get('/api/v1/health').set('X-Request-Id', 'health-down-1').then(expectContract);
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      type: 'http://leads.test/docs/errors#service_unavailable',
      status: 503,
      code: 'service_unavailable',
      instance: '/api/v1/health',
      request_id: 'health-down-1',
    });
    expect(res.body.health).toEqual({
      status: 'degraded',
      reasons: ['database_down'],
      version: VERSION,
      checks: { database: 'down' },
      outbox: null,
      webhooks: null,
    });
  });

  it('POST /api/v1/lead answers 503 service_unavailable with Retry-After, never 500', async () => {
    for (const headers of [{}, { 'Idempotency-Key': 'k-down' }]) {
      const res = await t.http.post('/api/v1/lead').set(headers).send(LEAD).then(expectContract);
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.body).toMatchObject({ code: 'service_unavailable', status: 503, instance: '/api/v1/lead' });
      expect(JSON.stringify(res.body)).not.toMatch(/stack|SQLITE|ECONN|QueryFailed|TypeORM/i);
    }
  });

  it('still validates first: an invalid lead is a 422, not a 503', async () => {
    const res = await t.http.post('/api/v1/lead').send({ nome: 'Ana' }).then(expectContract);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
  });

  it('the sandbox, which stores nothing, keeps working', async () => {
    const res = await t.http.post('/api/v1/sandbox').send(LEAD).then(expectContract);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ valid: true, stored: false, lead: LEAD });
  });

  it('info does not depend on the database', async () => {
    const res = await t.http.get('/api/v1/info').then(expectContract);
    expect(res.status).toBe(200);
  });
});
