/** @system single sign-on to the inbox (issue 38) in Chromium, through a real OpenID Provider (oidc-provider) run by the test */
import type { Page } from 'playwright-core';
import { PeopleService } from '../src/people/people.service.js';
import { CHROMIUM, HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, type Language } from './support/inbox-browser.js';
import { OIDC_CLIENT, startOidcProvider, type OidcProvider } from './support/oidc-provider.js';
import { freePort } from './support/server-process.js';
import { describeIf } from './support/skips.js';

const describeBrowser = describeIf(['chromium'], HAVE_CHROMIUM);

const DOMAIN = 'empresa.example.com.br';
/** The provider's accounts: the login typed on its page, and the claims it serves (from userinfo). */
const ACCOUNTS = {
  ana: { email: `ana@${DOMAIN}`, email_verified: true },
  bia: { email: `bia@${DOMAIN}`, email_verified: true },
  caio: { email: `caio@${DOMAIN}`, email_verified: false },
  davi: { email: 'davi@outra.example.org', email_verified: true },
  eva: { email: 'eva@parceira.example.org', email_verified: true },
};

const WORDS: Record<Language, { button: string; unverified: string; notAllowed: string; failed: string }> = {
  'pt-BR': {
    button: 'Entrar com Empresa SSO',
    unverified: 'O provedor não confirmou o seu endereço de e-mail',
    notAllowed: 'Este endereço não tem acesso à caixa.',
    failed: 'Não foi possível concluir a entrada pelo provedor.',
  },
  en: {
    button: 'Sign in with Empresa SSO',
    unverified: 'The provider did not confirm your e-mail address',
    notAllowed: 'This address has no access to the inbox.',
    failed: 'Signing in through the provider could not be completed.',
  },
};

describeBrowser(HAVE_CHROMIUM ? `inbox single sign-on (Chromium at ${CHROMIUM})` : `inbox single sign-on (SKIPPED: ${CHROMIUM} not found)`, () => {
  let inbox: InboxBrowser;
  let provider: OidcProvider;

  beforeAll(async () => {
    const providerPort = await freePort();
    // The provider is asked nothing before the first sign-in (discovery is lazy), so it may start after the inbox.
    inbox = await InboxBrowser.start({
      OIDC_ISSUER: `http://127.0.0.1:${providerPort}`,
      ...OIDC_CLIENT,
      OIDC_NAME: 'Empresa SSO',
      OIDC_ALLOWED_DOMAINS: DOMAIN,
    });
    provider = await startOidcProvider(providerPort, `${inbox.base}/inbox/oidc/callback`, ACCOUNTS);
  }, 60_000);
  afterAll(async () => {
    await provider?.stop();
    await inbox?.close();
  });

  /** From the inbox's sign-in page to the provider's login page, signed in there as `login`, and back. */
  async function throughProvider(page: Page, language: Language, login: string, path = '/inbox/sign-in'): Promise<void> {
    await page.goto(`${inbox.base}${path}`);
    await page.click(`a:has-text("${WORDS[language].button}")`);
    await page.waitForSelector('input[name="login"]');
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', 'any password');
    await Promise.all([page.waitForURL((url) => url.origin === inbox.base), page.click('button[type="submit"]')]);
    await page.waitForLoadState();
  }
  const signedIn = async (page: Page) => (await page.request.get(`${inbox.base}/inbox/leads`, { maxRedirects: 0 })).status() === 200;

  for (const language of ['pt-BR', 'en'] as const) {
    it(`signs a person of the inbox in through the provider and lands on the return path (${language})`, async () => {
      if (language === 'pt-BR') await inbox.person('marketer', ACCOUNTS.ana.email);
      const { context, page } = await inbox.page(language);
      await page.goto(`${inbox.base}/inbox/sign-in`);
      // Both ways in: the provider's button, and the code form.
      expect(await page.isVisible('input[type="email"]')).toBe(true);
      await inbox.check(page, `sso-sign-in-${language}`);
      await throughProvider(page, language, 'ana', '/inbox/sign-in?return=%2Finbox%2Fheld');
      expect(new URL(page.url()).pathname).toBe('/inbox/held');
      expect(await signedIn(page)).toBe(true);
      expect(inbox.problems(page)).toEqual([]);
      // The inbox's sign-out ends the inbox session; the provider's own is not the inbox's business.
      await page.click('form[action="/inbox/sign-out"] button');
      await page.waitForURL(/\/inbox\/sign-in\?signed-out=1$/);
      expect(await signedIn(page)).toBe(false);
      await context.close();
    }, 60_000);
  }

  it('adds a verified address of an allowed domain on its first sign-in, with the default role', async () => {
    const { context, page } = await inbox.page('pt-BR');
    expect(await inbox.t.app.get(PeopleService).byAddress(ACCOUNTS.bia.email)).toBeUndefined();
    await throughProvider(page, 'pt-BR', 'bia');
    expect(new URL(page.url()).pathname).toBe('/inbox/leads');
    expect(await inbox.t.app.get(PeopleService).byAddress(ACCOUNTS.bia.email)).toMatchObject({ role: 'viewer' });
    await context.close();
  }, 60_000);

  it('refuses an address the provider has not verified, one outside the allowed domains, and a person removed', async () => {
    const people = inbox.t.app.get(PeopleService);
    const eva = await inbox.person('viewer', ACCOUNTS.eva.email);
    for (const [login, words] of [
      ['caio', WORDS.en.unverified],
      ['davi', WORDS.en.notAllowed],
    ] as const) {
      const { context, page } = await inbox.page('en');
      await throughProvider(page, 'en', login);
      expect(await page.textContent('[role="alert"]')).toContain(words);
      expect(await signedIn(page)).toBe(false);
      await context.close();
    }
    // Eva is a person of the inbox (her domain is not allowed): in, then removed, then refused.
    const first = await inbox.page('en');
    await throughProvider(first.page, 'en', 'eva');
    expect(await signedIn(first.page)).toBe(true);
    await first.context.close();
    expect(await people.remove(eva.id)).toBe('done');
    const again = await inbox.page('en');
    await throughProvider(again.page, 'en', 'eva');
    expect(await again.page.textContent('[role="alert"]')).toContain(WORDS.en.notAllowed);
    expect(await signedIn(again.page)).toBe(false);
    expect(await people.byAddress(ACCOUNTS.eva.email)).toBeUndefined();
    await again.context.close();
  }, 90_000);

  it('refuses a callback whose state was changed on the way (and takes the same callback unchanged)', async () => {
    // The login's answer is taken over: the provider's redirects are followed here, up to the one back to the inbox,
    // whose `state` may get another return path (its MAC kept) before the browser is sent there.
    const takeOver = async (page: Page, tamper: boolean) =>
      page.route(/\/interaction\//, async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const login = await route.fetch({ maxRedirects: 0 });
        let location = new URL(login.headers().location, route.request().url());
        for (let hop = 0; hop < 5 && location.origin !== inbox.base; hop++) {
          const next = await page.request.get(location.href, { maxRedirects: 0 });
          location = new URL(next.headers().location, location);
        }
        const mac = location.searchParams.get('state')!.split('.')[1];
        if (tamper) location.searchParams.set('state', `${Buffer.from('/inbox/settings').toString('base64url')}.${mac}`);
        return route.fulfill({ status: 303, headers: { location: location.href } });
      });
    for (const tamper of [false, true]) {
      const { context, page } = await inbox.page('pt-BR');
      await takeOver(page, tamper);
      await throughProvider(page, 'pt-BR', 'ana');
      expect(await signedIn(page)).toBe(!tamper);
      if (tamper) {
        expect(new URL(page.url()).pathname).toBe('/inbox/oidc/callback');
        expect(await page.textContent('[role="alert"]')).toContain(WORDS['pt-BR'].failed);
      }
      await context.close();
    }
  }, 60_000);

  it('OIDC_ONLY: no code form, and its actions lead back to the sign-in page', async () => {
    const only = await InboxBrowser.start({
      OIDC_ISSUER: 'http://127.0.0.1:9',
      ...OIDC_CLIENT,
      OIDC_NAME: 'Empresa SSO',
      OIDC_ONLY: 'true',
    });
    try {
      const { context, page } = await only.page('pt-BR');
      await page.goto(`${only.base}/inbox/sign-in`);
      expect(await page.isVisible(`a:has-text("${WORDS['pt-BR'].button}")`)).toBe(true);
      expect(await page.$('input[type="email"]')).toBeNull();
      await only.check(page, 'sso-only-sign-in');
      // With the page's own CSRF token (the language form's), as a form of an older page would post.
      const csrf = await page.getAttribute('input[name="_csrf"]', 'value');
      const res = await page.request.post(`${only.base}/inbox/sign-in`, { form: { _csrf: csrf!, email: ACCOUNTS.ana.email }, maxRedirects: 0 });
      expect([res.status(), res.headers().location]).toEqual([303, '/inbox/sign-in']);
      expect(only.sink.messages).toHaveLength(0);
      await context.close();
    } finally {
      await only.close();
    }
  }, 60_000);
});
