/** @system the inbox's sign-in in Chromium, in pt-BR and English: code read from a real SMTP server, axe-core, screenshots */
import { CHROMIUM, HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, scrollsSideways, tabOrder, WIDTHS, screenshots, expectAccessible, Language } from './support/inbox-browser.js';
import { describeIf } from './support/skips.js';

const describeBrowser = describeIf(['chromium'], HAVE_CHROMIUM);

const WORDS: Record<Language, { send: string; signOut: string; signedOut: string; wrong: string; title: string }> = {
  'pt-BR': { send: 'Enviar código', signOut: 'Sair', signedOut: 'Você saiu.', wrong: 'Código incorreto. Restam 4 tentativas.', title: 'Entrar' },
  en: { send: 'Send code', signOut: 'Sign out', signedOut: 'You have signed out.', wrong: 'Wrong code. 4 tries left.', title: 'Sign in' },
};

describeBrowser(HAVE_CHROMIUM ? `inbox sign-in (Chromium at ${CHROMIUM})` : `inbox sign-in (SKIPPED: ${CHROMIUM} not found)`, () => {
  let inbox: InboxBrowser;

  beforeAll(async () => {
    inbox = await InboxBrowser.start();
  }, 60_000);
  afterAll(() => inbox?.close());

  for (const language of ['pt-BR', 'en'] as const) {
    it(`signs a person in by the mailed code and out again, in ${language}, accessible and fitting 375 and 1280 px`, async () => {
      const words = WORDS[language];
      const email = `ana.${language.toLowerCase()}@empresa.example.com.br`;
      await inbox.person('admin', email);
      const { context, page } = await inbox.page(language);
      // Sign-in page: its language, every control reachable by keyboard, nothing sideways on a phone.
      await page.goto(`${inbox.base}/inbox`);
      await page.waitForURL(/\/inbox\/sign-in$/);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.textContent('h1')).toBe(words.title);
      const reached = await tabOrder(page, 8);
      for (const control of ['a:#main', 'select:language', `button:${language === 'en' ? 'Change' : 'Mudar'}`, 'input:email', `button:${words.send}`])
        expect(reached).toContain(control);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        expect(await scrollsSideways(page)).toBe(false);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      // A wrong code first: the page says so, and the next try works.
      const before = inbox.sink.to(email).length;
      await inbox.check(page, `sign-in-${language}`);
      await page.fill('input[type="email"]', email);
      await page.press('input[type="email"]', 'Enter');
      await page.waitForSelector('input[name="code"]');
      await inbox.check(page, `sign-in-code-${language}`);
      const mail = await inbox.mail(email, before + 1);
      const code = /\d{6}/.exec(mail.parsed.text!)![0];
      expect(mail.parsed.subject).toContain(code);
      await page.fill('input[name="code"]', code === '000000' ? '111111' : '000000');
      await page.press('input[name="code"]', 'Enter');
      await page.waitForSelector('[role="alert"]');
      expect(await page.textContent('[role="alert"]')).toBe(words.wrong);
      await inbox.check(page, `sign-in-code-wrong-${language}`);
      await page.fill('input[name="code"]', code);
      await Promise.all([page.waitForURL(/\/inbox\/leads$/), page.press('input[name="code"]', 'Enter')]);
      // Signed in: the header has the sign-out button (whatever the leads page is on this branch).
      const cookies = await context.cookies();
      const session = cookies.find((cookie) => cookie.name === 'inbox_session')!;
      expect([session.httpOnly, session.sameSite]).toEqual([true, 'Lax']);
      expect(cookies.every((cookie) => cookie.httpOnly)).toBe(true);
      await page.goto(`${inbox.base}/inbox/nothing-here`);
      await expectAccessible(page, `error-${language}`);
      await screenshots(page, `error-${language}`);
      const signOut = page.getByRole('button', { name: words.signOut });
      await Promise.all([page.waitForURL(/\/inbox\/sign-in\?signed-out=1$/), signOut.click()]);
      expect(await page.textContent('[role="status"]')).toBe(words.signedOut);
      expect((await context.cookies()).some((cookie) => cookie.name === 'inbox_session')).toBe(false);
      expect(inbox.problems(page)).toEqual([]);
      await context.close();
    }, 60_000);
  }

  it('switches the language with the header form, and keeps it', async () => {
    const { context, page } = await inbox.page('pt-BR');
    await page.goto(`${inbox.base}/inbox/sign-in`);
    expect(await page.getAttribute('html', 'lang')).toBe('pt-BR');
    await page.selectOption('select[name="language"]', 'en');
    await Promise.all([page.waitForURL(/\/inbox\/sign-in$/), page.getByRole('button', { name: 'Mudar' }).click()]);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await page.goto(`${inbox.base}/inbox`);
    expect(await page.textContent('h1')).toBe('Sign in');
    expect(inbox.problems(page)).toEqual([]);
    await context.close();
  });
});
