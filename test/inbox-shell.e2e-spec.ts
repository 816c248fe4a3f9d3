/** @database the inbox's shell: sessions in the database, pages, CSRF, CSP, language, assets, errors (issue 35) */
import { createHash } from 'node:crypto';
import { expectContract } from './support/contract.js';
import { csrfOf, formBody, signedInAs } from './support/inbox-session.js';
import { startAppWith, TestApp } from './support/test-app.js';
import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentPerson, InboxForm, InboxPage } from '../src/inbox/inbox-page.guard.js';
import { InboxPages } from '../src/inbox/inbox-pages.service.js';
import { InboxModule } from '../src/inbox/inbox.module.js';
import type { PersonPrincipal } from '../src/inbox/inbox-sessions.service.js';
import { MANAGE_PEOPLE } from '../src/people/roles.js';

/** A page of the kind C and D write, for the guard's rules: admins only, a form, and an htmx answer. */
@Controller('inbox/test-admin')
class AdminPageController {
  constructor(private readonly pages: InboxPages) {}

  @Get()
  @InboxPage(MANAGE_PEOPLE)
  show(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal): void {
    this.pages.render(req, res, 'error', { problem: { code: person.userId, status: 200 }, message: 'error.generic' }, { title: 'error.title' });
  }

  @Post()
  @InboxPage(MANAGE_PEOPLE)
  act(@Req() req: Request, @Res() res: Response, @InboxForm() form: URLSearchParams): void {
    if (this.pages.isHtmx(req)) return this.pages.fragment(req, res, 'csrf-field', { ids: form.getAll('id') });
    this.pages.redirect(res, `/inbox/test-admin?ids=${form.getAll('id').join(',')}`);
  }
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

describe('the inbox shell', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startAppWith([AdminPageController], {}, [InboxModule]);
  });
  afterAll(() => t.close());

  it('sends a browser without a session from /inbox to the sign-in page, with the inbox CSP', async () => {
    const res = expectContract(await t.http.get('/inbox'));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/inbox/sign-in');
    expect(res.headers['content-security-policy']).toBe(CSP);
  });

  it('shows the sign-in page in pt-BR by default and in English for an English browser, with an e-mail field and no inline script', async () => {
    const pt = expectContract(await t.http.get('/inbox/sign-in'));
    expect(pt.status).toBe(200);
    expect(pt.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(pt.headers['content-security-policy']).toBe(CSP);
    expect(pt.headers['cache-control']).toBe('no-store');
    expect(pt.text).toContain('<html lang="pt-BR">');
    expect(pt.text).toContain('Enviar código');
    expect(pt.text).toMatch(/<input id="email" type="email" name="email"/);
    expect(pt.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(pt.text).not.toMatch(/\sstyle=/);
    const en = await t.http.get('/inbox/sign-in').set('Accept-Language', 'en-US,en;q=0.9');
    expect(en.text).toContain('<html lang="en">');
    expect(en.text).toContain('Send code');
  });

  it('gives a browser without cookies an HttpOnly SameSite=Lax CSRF cookie and a token bound to it', async () => {
    const page = await t.http.get('/inbox/sign-in');
    const setCookie = [page.headers['set-cookie']].flat().join('\n');
    expect(setCookie).toMatch(/^inbox_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Lax$/m);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    expect(page.text).toContain(`<meta name="csrf-token" content="${token}">`);
    const cookie = setCookie.split(';')[0];
    const chosen = expectContract(
      await t.http
        .post('/inbox/language')
        .set('Cookie', cookie)
        .type('form')
        .send(formBody({ _csrf: token, language: 'en', return: '/inbox/sign-in' })),
    );
    expect(chosen.status).toBe(303);
    expect(chosen.headers.location).toBe('/inbox/sign-in');
    expect([chosen.headers['set-cookie']].flat().join('\n')).toMatch(/^inbox_lang=en; Path=\/; HttpOnly; SameSite=Lax; Max-Age=31536000$/m);
    const english = await t.http.get('/inbox/sign-in').set('Cookie', `${cookie}; inbox_lang=en`).set('Accept-Language', 'pt-BR');
    expect(english.text).toContain('<html lang="en">');
  });

  it('refuses a cross-site post: no token, a token of another browser, or another Origin', async () => {
    const first = await t.http.get('/inbox/sign-in');
    const cookie = [first.headers['set-cookie']].flat()[0].split(';')[0];
    const token = /name="_csrf" value="([^"]+)"/.exec(first.text)![1];
    const other = await t.http.get('/inbox/sign-in');
    const otherToken = /name="_csrf" value="([^"]+)"/.exec(other.text)![1];
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      t.http
        .post('/inbox/language')
        .set('Cookie', cookie)
        .set(headers)
        .type('form')
        .send(formBody({ language: 'en', ...fields }));
    for (const res of [await post({}), await post({ _csrf: otherToken }), await post({ _csrf: token }, { Origin: 'https://evil.example' })]) {
      expectContract(res);
      expect(res.status).toBe(403);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).toContain('csrf_token_invalid');
    }
    const problem = expectContract(await post({}).set('Accept', 'application/problem+json'));
    expect(problem.body).toMatchObject({ status: 403, code: 'csrf_token_invalid' });
  });

  it('takes a signed-in person from /inbox to the leads and lets them sign out, which ends the session', async () => {
    const ana = await signedInAs(t, 'viewer');
    const home = await ana.get('/inbox');
    expect(home.status).toBe(303);
    expect(home.headers.location).toBe('/inbox/leads');
    const page = await ana.get('/inbox/sign-in');
    expect(page.text).toContain('action="/inbox/sign-out"');
    expect(page.text).toContain('href="/inbox/leads"');
    expect(page.text).not.toContain('href="/inbox/held"');
    const out = expectContract(await ana.post('/inbox/sign-out'));
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/inbox/sign-in?signed-out=1');
    expect([out.headers['set-cookie']].flat().join('\n')).toMatch(/^inbox_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/m);
    const [{ n }] = await t.dataSource.query(
      'SELECT COUNT(*) AS n FROM inbox_sessions WHERE person_id = $1'.replace('$1', t.dataSource.options.type === 'postgres' ? '$1' : '?'),
      [ana.userId],
    );
    expect(Number(n)).toBe(0);
    expect((await ana.get('/inbox')).headers.location).toBe('/inbox/sign-in');
  });

  it('shows nav links by scope: an admin sees Leads, Held and Settings', async () => {
    const admin = await signedInAs(t, 'admin');
    const page = await admin.get('/inbox/sign-in');
    for (const href of ['/inbox/leads', '/inbox/held', '/inbox/settings']) expect(page.text).toContain(`href="${href}"`);
  });

  it('serves its CSS, script and htmx with caching headers and 304 on a match', async () => {
    const page = await t.http.get('/inbox/sign-in');
    const css = /href="(\/inbox\/assets\/inbox\.css\?v=[\w-]+)"/.exec(page.text)![1];
    const versioned = expectContract(await t.http.get(css));
    expect(versioned.status).toBe(200);
    expect(versioned.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const htmx = expectContract(await t.http.get('/inbox/assets/htmx.min.js'));
    expect(htmx.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(htmx.headers['cache-control']).toBe('public, max-age=300');
    expect(htmx.text).toContain('htmx');
    const again = expectContract(await t.http.get('/inbox/assets/htmx.min.js').set('If-None-Match', htmx.headers.etag));
    expect(again.status).toBe(304);
    const missing = expectContract(await t.http.get('/inbox/assets/nope.js'));
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Esta página não existe.');
  });

  it('refuses a form that is not urlencoded on /inbox, and urlencoded bodies on the JSON API', async () => {
    const page = await t.http.get('/inbox/sign-in');
    const cookie = [page.headers['set-cookie']].flat()[0].split(';')[0];
    const json = expectContract(
      await t.http
        .post('/inbox/language')
        .set('Cookie', cookie)
        .send({ _csrf: csrfOf(page.text), language: 'en' }),
    );
    expect(json.status).toBe(415);
    expect(json.text).toContain('unsupported_media_type');
    expect(json.headers['set-cookie']).toBeUndefined();
    const api = expectContract(await t.http.post('/api/v1/lead').type('form').send('nome=Ana&email=ana%40exemplo.com'));
    expect(api.status).toBe(415);
  });

  it('treats /Inbox and /INBOX (express matches any case) as the inbox: sign-in redirect, its headers, its form rules', async () => {
    // The contract's paths are lower case: each answer is checked against the canonical path's, which is checked there.
    const canonical = expectContract(await t.http.get('/inbox/leads'));
    expect(canonical.status).toBe(303);
    for (const path of ['/Inbox/leads', '/INBOX/leads']) {
      const res = await t.http.get(path);
      expect([res.status, res.headers.location]).toEqual([303, `/inbox/sign-in?return=${encodeURIComponent(path)}`]);
      for (const name of ['content-security-policy', 'cache-control', 'content-type']) expect(res.headers[name]).toBe(canonical.headers[name]);
    }
    expect(canonical.headers['cache-control']).toBe('no-store');
    const page = await t.http.get('/inbox/sign-in');
    const cookie = [page.headers['set-cookie']].flat()[0].split(';')[0];
    const json = expectContract(
      await t.http
        .post('/inbox/language')
        .set('Cookie', cookie)
        .send({ _csrf: csrfOf(page.text), language: 'en' }),
    );
    expect([json.status, json.type]).toEqual([415, 'text/html']);
    const odd = await t.http
      .post('/Inbox/language')
      .set('Cookie', cookie)
      .send({ _csrf: csrfOf(page.text), language: 'en' });
    expect([odd.status, odd.type, odd.text]).toEqual([json.status, json.type, expect.stringContaining('unsupported_media_type')]);
    const form = await t.http
      .post('/INBOX/language')
      .set('Cookie', cookie)
      .type('form')
      .send(formBody({ _csrf: csrfOf(page.text), language: 'en' }));
    expect([form.status, form.headers.location]).toEqual([303, '/inbox/leads']);
  });

  it('gives no page of the inbox to another origin: no CORS headers (not even to a preflight), CORP same-origin, XFO DENY', async () => {
    for (const path of ['/inbox/sign-in', '/Inbox/sign-in', '/inbox/leads']) {
      const res = await t.http.get(path).set('Origin', 'https://other.example');
      if (path === path.toLowerCase()) expectContract(res);
      expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
      expect([res.headers['cross-origin-resource-policy'], res.headers['x-frame-options']]).toEqual(['same-origin', 'DENY']);
      const preflight = await t.http
        .options(path)
        .set('Origin', 'https://other.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type');
      expect(preflight.status).not.toBe(204);
      expect(Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    // The API beside it keeps its CORS.
    const api = await t.http.options('/api/v1/lead').set('Origin', 'https://other.example').set('Access-Control-Request-Method', 'POST');
    expect([api.status, api.headers['access-control-allow-origin']]).toEqual([204, '*']);
  });

  it('keeps session ids out of the database: only their SHA-256 is stored', async () => {
    const ana = await signedInAs(t, 'marketer');
    const id = ana.cookie.split('=')[1];
    const rows: { id_hash: string }[] = await t.dataSource.query('SELECT id_hash FROM inbox_sessions');
    expect(rows.map((row) => row.id_hash)).toContain(createHash('sha256').update(id).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(id);
  });

  describe('a page that needs a scope', () => {
    it('sends a browser without a session to sign in, with the page as its return path; htmx gets HX-Redirect', async () => {
      const res = await t.http.get('/inbox/test-admin?x=1');
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/inbox/sign-in?return=%2Finbox%2Ftest-admin%3Fx%3D1');
      const htmx = await t.http.post('/inbox/test-admin').set('HX-Request', 'true').type('form').send('id=1');
      expect(htmx.status).toBe(401);
      expect(htmx.headers['hx-redirect']).toBe('/inbox/sign-in');
      expect(htmx.body).toMatchObject({ code: 'inbox_sign_in_required' });
    });

    it('answers a viewer’s request to an admin page or action with the 403 page, in their language, and changes nothing', async () => {
      const viewer = await signedInAs(t, 'viewer');
      const page = await viewer.get('/inbox/test-admin');
      expect(page.status).toBe(403);
      expect(page.headers['content-security-policy']).toBe(CSP);
      expect(page.text).toContain('Você não tem permissão para esta página ou ação.');
      expect(page.text).toContain('insufficient_scope');
      const english = await viewer.get('/inbox/test-admin').set('Accept-Language', 'en');
      expect(english.text).toContain('You do not have permission for this page or action.');
      const action = await viewer.post('/inbox/test-admin', { id: ['a', 'b'] });
      expect(action.status).toBe(403);
      const problem = await viewer.get('/inbox/test-admin').set('Accept', 'application/problem+json');
      expect(problem.body).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('serves an admin, reads repeated form fields, and answers htmx with the fragment alone', async () => {
      const admin = await signedInAs(t, 'admin');
      const page = await admin.get('/inbox/test-admin');
      expect(page.status).toBe(200);
      expect(page.text).toContain(admin.userId);
      const posted = await admin.post('/inbox/test-admin', { id: ['a', 'b'] });
      expect(posted.status).toBe(303);
      expect(posted.headers.location).toBe('/inbox/test-admin?ids=a,b');
      const fragment = await admin.post('/inbox/test-admin', { id: 'a' }, { 'HX-Request': 'true', 'X-CSRF-Token': admin.csrf });
      expect(fragment.status).toBe(200);
      expect(fragment.text.trim()).toBe(`<input type="hidden" name="_csrf" value="${admin.csrf}">`);
      const noToken = await admin.post('/inbox/test-admin', { id: 'a', _csrf: 'x' });
      expect(noToken.status).toBe(403);
      expect(noToken.text).toContain('csrf_token_invalid');
    });
  });
});
