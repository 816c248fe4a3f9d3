/** @system @database single sign-on to the inbox (issue 38) over HTTP, every answer held to the contract: the flow, its refusals, its logs */
import { Logger } from '@nestjs/common';
import { createLogger, NestPinoLogger } from '../src/logging/logger.js';
import { PeopleService } from '../src/people/people.service.js';
import { expectContract } from './support/contract.js';
import { OIDC_CLIENT, startOidcProvider, type OidcProvider } from './support/oidc-provider.js';
import { freePort } from './support/server-process.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const ACCOUNTS = {
  ana: { email: `ana.${process.pid}@empresa.example.com.br`, email_verified: true },
  caio: { email: `caio.${process.pid}@empresa.example.com.br`, email_verified: false },
  /** Another account of the provider that later presents Ana's address. */
  impostor: { email: `ana.${process.pid}@empresa.example.com.br`, email_verified: true },
};
const logged: string[] = [];

/** A person at the provider's login page, as a browser would go: its cookies kept, redirects followed by hand. */
async function loginAt(authorizeUrl: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const visit = async (url: URL, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as object), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return res;
  };
  let url = new URL(authorizeUrl);
  let res = await visit(url);
  url = new URL(res.headers.get('location')!, url);
  res = await visit(url);
  const action = /action="([^"]+)"/.exec(await res.text())![1];
  res = await visit(new URL(action), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `prompt=login&login=${login}&password=x`,
  });
  url = new URL(res.headers.get('location')!, action);
  for (let hop = 0; hop < 5 && !url.pathname.endsWith('/inbox/oidc/callback'); hop++) {
    res = await visit(url);
    url = new URL(res.headers.get('location')!, url);
  }
  return url;
}

describe('inbox single sign-on over HTTP', () => {
  let t: TestApp;
  let provider: OidcProvider;

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestApp({
      OIDC_ISSUER: `http://127.0.0.1:${port}`,
      ...OIDC_CLIENT,
      OIDC_ALLOWED_DOMAINS: 'empresa.example.com.br',
      PUBLIC_BASE_URL: 'http://localhost:8080',
    });
    provider = await startOidcProvider(port, 'http://localhost:8080/inbox/oidc/callback', ACCOUNTS);
    Logger.overrideLogger(new NestPinoLogger(createLogger('debug', { write: (line: string) => void logged.push(line) })));
  }, 30_000);
  afterAll(async () => {
    await provider?.stop();
    await t.close();
  });

  /** The start: its 303 to the provider and the attempt's cookie. */
  const start = async (query = '') => {
    const res = expectContract(await t.http.get(`/inbox/oidc/start${query}`));
    expect(res.status).toBe(303);
    const cookie = (res.headers['set-cookie'] as unknown as string[]).find((line) => line.startsWith('inbox_oidc='))!;
    expect(cookie).toMatch(/^inbox_oidc=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
    return { location: res.headers.location as string, cookie: cookie.split(';')[0] };
  };
  const callback = (url: URL, cookie?: string) => {
    const req = t.http.get(`${url.pathname}${url.search}`);
    return (cookie ? req.set('Cookie', cookie) : req).then(expectContract);
  };

  it('sends the browser to the provider with PKCE, state and nonce, and back to a session on the return path', async () => {
    await t.app.get(PeopleService).add(ACCOUNTS.ana.email, 'marketer');
    const { location, cookie } = await start('?return=%2Finbox%2Fheld');
    const authorize = new URL(location);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'inbox',
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: 'http://localhost:8080/inbox/oidc/callback',
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.stringMatching(/^[\w-]+\.[\w-]{43}$/),
    });
    const back = await loginAt(location, 'ana');
    const res = await callback(back, cookie);
    expect([res.status, res.headers.location]).toEqual([303, '/inbox/held']);
    const session = (res.headers['set-cookie'] as unknown as string[]).find((line) => line.startsWith('inbox_session='))!;
    expect((await t.http.get('/inbox/leads').set('Cookie', session.split(';')[0]).then(expectContract)).status).toBe(200);
    // The same answer again (a replayed URL): the attempt is spent.
    expect((await callback(back, cookie)).status).toBe(400);
    // Ana is now the provider account she signed in with: another account with her address is refused.
    const other = await start();
    const refused = await callback(await loginAt(other.location, 'impostor'), other.cookie);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Este endereço não tem acesso à caixa.');
  }, 30_000);

  it("refuses a callback without its browser's attempt, and an unverified address, on the sign-in page", async () => {
    const first = await start();
    const back = await loginAt(first.location, 'ana');
    const stranger = await callback(back);
    expect(stranger.status).toBe(400);
    expect(stranger.text).toContain('Não foi possível concluir a entrada pelo provedor.');
    const other = await start();
    expect((await callback(back, other.cookie)).status).toBe(400);

    const unverified = await start();
    const res = await callback(await loginAt(unverified.location, 'caio'), unverified.cookie);
    expect(res.status).toBe(403);
    expect(res.text).toContain('O provedor não confirmou o seu endereço de e-mail');
    expect(await t.app.get(PeopleService).byAddress(ACCOUNTS.caio.email)).toBeUndefined();
  }, 30_000);

  it('logs sign-ins and refusals by cause, never an address, a code or a token', () => {
    const lines = logged.join('\n');
    expect(lines).toContain('"method":"oidc"');
    expect(lines).toContain('"cause":"unverified"');
    expect(lines).toContain('"cause":"other_account"');
    for (const account of Object.values(ACCOUNTS)) expect(lines).not.toContain(account.email);
    expect(lines).not.toMatch(/code=|access_token|id_token/);
  });

  it('answers 404 where single sign-on is not configured, and 503 on the sign-in page when the provider is down', async () => {
    const off = await startTestApp();
    try {
      expect((await off.http.get('/inbox/oidc/start').then(expectContract)).status).toBe(404);
      expect((await off.http.get('/inbox/oidc/callback?code=x&state=y').then(expectContract)).status).toBe(404);
    } finally {
      await off.close();
    }
    const down = await startTestApp({
      OIDC_ISSUER: `http://127.0.0.1:${await freePort()}`,
      ...OIDC_CLIENT,
      PUBLIC_BASE_URL: 'http://localhost:8080',
    });
    try {
      const res = await down.http.get('/inbox/oidc/start').then(expectContract);
      expect(res.status).toBe(503);
      expect(res.text).toContain('O provedor de entrada não respondeu.');
    } finally {
      await down.close();
    }
  }, 30_000);
});
