/** @system builds and serves the docs as processes */
import { execFileSync } from 'node:child_process';
import { SITE_LINKS } from '../src/docs/docs-layout.js';
import { ERROR_CATALOG, ErrorCode } from '../src/problem/error-catalog.js';
import { CONTRACT, expectContract } from './support/contract.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { SITE_PAGES } from './support/site-pages.js';

const BASE = 'http://leads.test';
const HTML = 'text/html; charset=utf-8';
const CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** Every src= and href= value in an HTML document. */
function references(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]);
}

/** Redocly's bundle of the contract's sources under openapi/, made now (not the build's copy that the app serves). */
function bundleOfSources(): unknown {
  const bundle = execFileSync(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'bundle', 'openapi/openapi.yaml', '--ext', 'json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return JSON.parse(bundle);
}

function ids(html: string): string[] {
  return [...html.matchAll(/\bid\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]);
}

const CONTENT_TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  png: 'image/png',
};

describe('docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('GET /docs/openapi-leads.json', () => {
    it("is Redocly's bundle of openapi/, byte for byte as compact JSON", async () => {
      const res = await t.http.get('/docs/openapi-leads.json').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const bundle = bundleOfSources();
      expect(res.body).toEqual(bundle);
      expect(res.text === JSON.stringify(bundle)).toBe(true);
    });

    it('answers HEAD without a body', async () => {
      const res = await t.http.head('/docs/openapi-leads.json').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.text ?? '').toBe('');
    });
  });

  describe('GET /docs (Swagger UI)', () => {
    it('is HTML that loads only local assets, with no inline script', async () => {
      const res = await t.http.get('/docs').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text).toMatch(/^<!doctype html>/i);
      const refs = references(res.text);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) expect(ref).toMatch(/^\/(?!\/)/);
      // What the page loads (not what it links to) is its own assets and the icon.
      const loaded = [...res.text.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/gi)].map((m) => m[1]);
      for (const ref of loaded) expect(ref).toMatch(/^\/docs\/assets\/[\w.-]+$|^\/favicon\.ico$/);
      expect(res.text).not.toMatch(/https?:\/\//i);
      // CSP has script-src 'self' only: every script must be a file.
      const scripts = [...res.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attributes, body] of scripts) {
        expect(attributes).toMatch(/\bsrc=/);
        expect(body.trim()).toBe('');
      }
    });

    it('points Swagger UI at /docs/openapi-leads.json, by a local path', async () => {
      const page = await t.http.get('/docs').then(expectContract);
      const init = references(page.text).find((ref) => /init/.test(ref));
      expect(init).toBeDefined();
      const res = await t.http.get(init!).then(expectContract);
      expect(res.text).toMatch(/url:\s*'\/docs\/openapi-leads\.json'/);
      expect(res.text).not.toMatch(/https?:\/\//i);
    });

    it('serves every asset referenced by the documentation pages with its content type', async () => {
      const assets = new Set<string>();
      for (const page of ['/docs', '/docs/errors', '/docs/quickstart', '/docs/api-versioning']) {
        const res = await t.http.get(page).then(expectContract);
        expect(res.status).toBe(200);
        for (const ref of references(res.text)) if (ref.startsWith('/docs/assets/')) assets.add(ref);
      }
      expect([...assets]).toEqual(expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/docs.css']));
      for (const asset of assets) {
        const res = await t.http.get(asset).buffer(true).then(expectContract);
        expect(res.status).toBe(200);
        const extension = asset.split('.').pop()!;
        expect([asset, res.headers['content-type']]).toEqual([asset, CONTENT_TYPES[extension]]);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
        const body: Buffer = Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.text);
        expect(body.length).toBeGreaterThan(0);
        if (extension === 'png') expect(body.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      }
    });

    it.each(['nope.js', 'swagger-ui-bundle.js.map', '__proto__', 'hasOwnProperty', '..%2F..%2Fpackage.json', '.env'])(
      'answers an unknown asset (%s) with a 404 problem',
      async (name) => {
        const res = await t.http.get(`/docs/assets/${name}`).then(expectContract);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.body).toMatchObject({ code: 'not_found', status: 404, type: `${BASE}/docs/errors#not_found` });
        expect(res.text).not.toMatch(/"version"\s*:\s*"|leads-service/);
      },
    );

    it('refuses POST /docs with 405 and Allow: GET, HEAD', async () => {
      const res = await t.http.post('/docs').set('Content-Type', 'application/json').send('{}').then(expectContract);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405, instance: '/docs' });
    });
  });

  describe('GET /docs/errors', () => {
    let html: string;
    beforeAll(async () => {
      const res = await t.http.get('/docs/errors').then(expectContract);
      expect(res.status).toBe(200);
      html = res.text;
    });

    it('is HTML with exactly one element per catalog code, whose id is the code', async () => {
      const res = await t.http.get('/docs/errors').then(expectContract);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.headers.vary).toMatch(/\bAccept\b/);
      expect(html).toMatch(/<h1[^>]*>[^<]+<\/h1>/);
      const all = ids(html);
      for (const code of CODES) expect([code, all.filter((id) => id === code).length]).toEqual([code, 1]);
      expect(new Set(all).size).toBe(all.length);
    });

    it.each([
      ['no Accept', undefined],
      ['a browser Accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
      ['*/*', '*/*'],
      ['HTML preferred over JSON', 'application/json;q=0.5, text/html'],
    ])('is HTML for %s', async (_name, accept) => {
      const req = t.http.get('/docs/errors');
      const res = await (accept ? req.set('Accept', accept) : req).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
    });

    it('is the catalog as JSON for Accept: application/json', async () => {
      const res = await t.http.get('/docs/errors').set('Accept', 'application/json').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.vary).toMatch(/\bAccept\b/);
      expect(res.body).toEqual({
        errors: CODES.map((code) => ({
          code,
          status: ERROR_CATALOG[code].status,
          title: ERROR_CATALOG[code].title,
          hint: ERROR_CATALOG[code].hint,
          description: ERROR_CATALOG[code].description,
          type: `${BASE}/docs/errors#${code}`,
        })),
      });
    });

    it('lists the same codes as the contract (ErrorCode enum)', () => {
      expect([...CONTRACT.components.schemas.ErrorCode.enum].sort()).toEqual([...CODES].sort());
    });

    it('has an anchor for every problem type the service emits', async () => {
      const anchors = new Set(ids(html));
      const json = (body: string, headers: Record<string, string> = {}) =>
        t.http
          .post('/api/v1/lead')
          .set({ 'Content-Type': 'application/json', ...headers })
          .send(body);
      const emitted = await Promise.all([
        t.http.get('/nowhere'),
        t.http.get('/docs/nope'),
        t.http.delete('/api/v1/lead'),
        t.http.get('/api/v1/sandbox'),
        json('{"nome":'),
        json('[]'),
        json('{"nome": 1}'),
        json('{}', { 'Content-Type': 'text/plain' }),
        json('{"nome": "Ana", "email": "ana@exemplo.com"}', { 'Idempotency-Key': '""' }),
        json(JSON.stringify({ mensagem: 'x'.repeat(40_000) })),
        t.http
          .post('/api/v1/lead')
          .set('Content-Type', 'application/json')
          .serialize((bytes: Buffer) => bytes as unknown as string) // send the bytes as they are, not as JSON of a Buffer
          .send(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])),
      ]);
      const codes = new Set<string>();
      for (const res of emitted) {
        expectContract(res);
        expect(res.status).toBeGreaterThanOrEqual(400);
        const { type, code } = res.body as { type: string; code: string };
        expect(type).toBe(`${BASE}/docs/errors#${code}`);
        const url = new URL(type);
        expect(url.origin + url.pathname).toBe(`${BASE}/docs/errors`);
        expect(anchors.has(decodeURIComponent(url.hash.slice(1)))).toBe(true);
        const page = await t.http.get(url.pathname).then(expectContract);
        expect(page.status).toBe(200);
        codes.add(code);
      }
      expect([...codes].sort()).toEqual(
        [
          'body_not_object',
          'idempotency_key_invalid',
          'invalid_encoding',
          'malformed_json',
          'method_not_allowed',
          'not_found',
          'payload_too_large',
          'unsupported_media_type',
          'validation_failed',
        ].sort(),
      );
    });

    it('has an anchor for the type of every catalog entry', async () => {
      const res = await t.http.get('/docs/errors').set('Accept', 'application/json').then(expectContract);
      const anchors = new Set(ids(html));
      for (const entry of res.body.errors as { type: string }[]) {
        const url = new URL(entry.type);
        expect(url.origin + url.pathname).toBe(`${BASE}/docs/errors`);
        expect(anchors.has(url.hash.slice(1))).toBe(true);
      }
    });
  });

  describe('the site', () => {
    it.each(SITE_PAGES)('%s has the one navigation, marks itself in it, and links the icon', async (path) => {
      const res = await t.http.get(path).set('Accept', 'text/html').then(expectContract);
      expect(res.status).toBe(200);
      const navs = [...res.text.matchAll(/<nav class="site-nav"[^>]*>([\s\S]*?)<\/nav>/g)];
      expect(navs).toHaveLength(1);
      const links = [...navs[0][1].matchAll(/<a\b[^>]*href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map(([, href, label]) => [href, label]);
      expect(links).toEqual([['/docs/quickstart', 'Leads API'], ...SITE_LINKS]);
      expect([...navs[0][1].matchAll(/href="([^"]*)" aria-current="page"/g)].map((m) => m[1])).toEqual([path]);
      expect(res.text).toContain('<link rel="icon" href="/favicon.ico" sizes="32x32">');
    });

    it('names in its navigation quick start, agents, operators, webhooks, privacy, errors, versioning, GraphQL, MCP card and CLI', () => {
      expect(Object.fromEntries(SITE_LINKS.map(([href, label]) => [label, href]))).toMatchObject({
        Quickstart: '/docs/quickstart',
        Agents: '/docs/agents',
        Operators: '/docs/operators',
        Webhooks: '/docs/webhooks',
        Privacy: '/docs/privacy',
        Errors: '/docs/errors',
        Versioning: '/docs/api-versioning',
        'GraphQL explorer': '/api/v1/graphql',
        'MCP card': '/.well-known/mcp/server-card.json',
        CLI: '/cli/',
      });
    });

    it.each(SITE_LINKS.map(([href]) => href))('the navigation link %s answers 200', async (href) => {
      const res = await t.http.get(href).then(expectContract);
      expect(res.status).toBe(200);
    });

    it('GET /favicon.ico is a small ICO, cacheable', async () => {
      const res = await t.http.get('/favicon.ico').buffer(true).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/x-icon');
      expect(res.headers['cache-control']).toBe('public, max-age=86400');
      const body = res.body as Buffer;
      // ICONDIR: reserved 0, type 1 (icon), one image of 32×32 at 32 bits per pixel.
      expect([body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt16LE(4), body[6], body[7], body.readUInt16LE(12)]).toEqual([0, 1, 1, 32, 32, 32]);
      expect(body.length).toBe(body.readUInt32LE(18) + body.readUInt32LE(14));
      expect(body.length).toBeLessThan(8192);
    });
  });

  describe('the GraphQL explorer', () => {
    it('gives each example the variables it declares, and none to those that declare none', async () => {
      const res = await t.http.get('/api/v1/graphql').set('Accept', 'text/html').then(expectContract);
      const unescape = (text: string) =>
        text
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&');
      const options = [...res.text.matchAll(/<option value="([^"]*)" data-variables="([^"]*)">([^<]*)<\/option>/g)].map(([, query, variables, name]) => ({
        name,
        query: unescape(query),
        variables: unescape(variables),
      }));
      expect(options.map((option) => option.name)).toEqual(['Health', 'Site', 'Search the docs', 'One page']);
      for (const option of options) {
        const declared = [...option.query.matchAll(/\$(\w+)\s*:/g)].map((m) => m[1]).sort();
        expect([option.name, option.variables ? Object.keys(JSON.parse(option.variables)).sort() : []]).toEqual([option.name, declared]);
      }
      // The page opens on the first example, with its (empty) variables.
      expect(res.text).toMatch(/<textarea id="variables"[^>]*><\/textarea>/);
    });
  });

  describe('other pages', () => {
    it('GET /docs/api-versioning is HTML with an <h1>', async () => {
      const res = await t.http.get('/docs/api-versioning').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text).toMatch(/<h1[^>]*>[^<]*version[^<]*<\/h1>/i);
      expect(res.text).toContain(`${BASE}/docs/api-versioning`);
      expect(res.text).not.toContain('{base_url}');
    });

    it('GET /docs/quickstart is HTML with an <h1>', async () => {
      const res = await t.http.get('/docs/quickstart').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text).toMatch(/<h1[^>]*>Quickstart<\/h1>/);
      expect(res.text).toContain(`${BASE}/api/v1/sandbox`);
      expect(res.text).not.toContain('{base_url}');
      // A marketer starts at the inbox, told in Portuguese first; the API comes after.
      const inbox = res.text.indexOf(`href="${BASE}/inbox"`);
      expect(inbox).toBeGreaterThan(0);
      expect(inbox).toBeLessThan(res.text.indexOf(`${BASE}/api/v1/sandbox`));
      expect(res.text).toContain('código de 6 dígitos');
      expect(res.text).toContain('npm run users:add -- --email ana@empresa.com.br --role admin');
    });

    it('GET /auth.md: step 3 (the token) does not deny the refresh tokens of step 7', async () => {
      const res = await t.http.get('/auth.md').then(expectContract);
      expect(res.status).toBe(200);
      const steps = res.text.split(/^## /m);
      const step = (n: number) => steps.find((section) => section.startsWith(`${n}. `))!;
      expect(step(7)).toMatch(/^7\. Keep the identity: refresh\n[\s\S]*`refresh_token`/);
      expect(step(3)).not.toMatch(/there is no refresh token/i);
      expect(step(3)).toContain('This answer has no refresh token');
      expect(step(3)).toContain('(step 7)');
    });

    it('pages answer HEAD without a body', async () => {
      const res = await t.http.head('/docs/api-versioning').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text ?? '').toBe('');
    });

    it.each(['/docs/nope', '/docs/Quickstart', '/docs/errors.html', '/docs/quickstart/extra'])(
      'answers the unknown page %s with a 404 problem',
      async (path) => {
        const res = await t.http.get(path).then(expectContract);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.body).toMatchObject({ code: 'not_found', status: 404, instance: path, type: `${BASE}/docs/errors#not_found` });
      },
    );
  });
});
