/** @database the inbox's shell: sessions in the database, pages, CSRF, CSP, language, assets, errors (issue 35) */
import { createHash } from 'node:crypto';
import { expectContract } from './support/contract.js';
import { formBody, signedInAs } from './support/inbox-session.js';
import { startTestApp, TestApp } from './support/test-app.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

describe('the inbox shell', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
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
    const ana = await signedInAs(t, 'viewer');
    const json = expectContract(await t.http.post('/inbox/sign-out').set('Cookie', ana.cookie).set('X-CSRF-Token', ana.csrf).send({ a: 1 }));
    expect(json.status).toBe(303);
    const noToken = expectContract(await t.http.post('/inbox/sign-out').set('Cookie', ana.cookie).send({ _csrf: ana.csrf }));
    expect(noToken.status).toBe(415);
    const api = expectContract(await t.http.post('/api/v1/lead').type('form').send('nome=Ana&email=ana%40exemplo.com'));
    expect(api.status).toBe(415);
  });

  it('keeps session ids out of the database: only their SHA-256 is stored', async () => {
    const ana = await signedInAs(t, 'marketer');
    const id = ana.cookie.split('=')[1];
    const rows: { id_hash: string }[] = await t.dataSource.query('SELECT id_hash FROM inbox_sessions');
    expect(rows.map((row) => row.id_hash)).toContain(createHash('sha256').update(id).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(id);
  });
});
