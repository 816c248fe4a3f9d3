/** @system /privacy in Chromium, in pt-BR and English: a person's access and erasure by the mailed code, axe-core, screenshots at 375 and 1280 px */
import { readFileSync } from 'node:fs';
import { CHROMIUM, HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, Language, scrollsSideways, WIDTHS } from './support/inbox-browser.js';
import { describeIf } from './support/skips.js';

const describeBrowser = describeIf(['chromium'], HAVE_CHROMIUM);

const WORDS: Record<Language, { title: string; send: string; wrong: string; access: string; holds: string; erase: string; erased: string; other: string }> = {
  'pt-BR': {
    title: 'Seus dados pessoais',
    send: 'Enviar código',
    wrong: 'Código incorreto. Restam 4 tentativas.',
    access: 'Os dados que temos sobre você',
    holds: 'Temos 1 registro (lead) com este endereço.',
    erase: 'Eliminar os meus dados',
    erased: 'Eliminamos 1 registro com este endereço, e avisamos os sistemas que os receberam.',
    other: 'English',
  },
  en: {
    title: 'Your personal data',
    send: 'Send code',
    wrong: 'Wrong code. 4 tries left.',
    access: 'The data we hold on you',
    holds: 'We hold 1 record (lead) with this address.',
    erase: 'Erase my data',
    erased: 'We erased 1 record with this address, and told the systems that received them.',
    other: 'Português',
  },
};

describeBrowser(HAVE_CHROMIUM ? `/privacy (Chromium at ${CHROMIUM})` : `/privacy (SKIPPED: ${CHROMIUM} not found)`, () => {
  let site: InboxBrowser;

  beforeAll(async () => {
    site = await InboxBrowser.start({ VERIFICATION_MAIL_DAILY_LIMIT: '100' });
  }, 60_000);
  afterAll(() => site?.close());

  const lead = async (nome: string, email: string) => {
    const res = await site.t.http.post('/api/v1/lead').send({ nome, email, telefone: '(11) 98765-4321' });
    expect(res.status).toBe(201);
  };

  for (const language of ['pt-BR', 'en'] as const) {
    it(`a person sees their data and downloads it by the mailed code, in ${language}, accessible and fitting 375 and 1280 px`, async () => {
      const words = WORDS[language];
      const email = `teresa.${language.toLowerCase()}@pessoa.example.com.br`;
      const nome = `Teresa ${language === 'en' ? 'English' : 'Português'}`;
      await lead(nome, email);
      const { context, page } = await site.page(language);
      await page.goto(`${site.base}/privacy`);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.textContent('h1')).toBe(words.title);
      expect(await page.textContent('main a')).toBe(words.other);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        expect(await scrollsSideways(page)).toBe(false);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await site.check(page, `privacy-${language}`);

      await page.fill('input[type="email"]', email);
      await page.click(`button:has-text("${words.send}")`);
      await page.waitForSelector('input[name="code"]');
      await site.check(page, `privacy-code-${language}`);
      const code = /\d{6}/.exec((await site.mail(email, 1)).parsed.text!)![0];
      await page.fill('input[name="code"]', code === '000000' ? '111111' : '000000');
      await page.press('input[name="code"]', 'Enter');
      await page.waitForSelector('[role="alert"]');
      expect(await page.textContent('[role="alert"]')).toBe(words.wrong);
      await page.fill('input[name="code"]', code);
      await page.press('input[name="code"]', 'Enter');
      await page.waitForSelector('table');
      expect(await page.textContent('h1')).toBe(words.access);
      expect(await page.textContent('main p')).toBe(words.holds);
      expect(await page.textContent('tbody')).toContain(nome);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        expect(await scrollsSideways(page)).toBe(false);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await site.check(page, `privacy-access-${language}`);

      const [download] = await Promise.all([page.waitForEvent('download'), page.click('form[action$="/download"] button')]);
      const csv = readFileSync((await download.path())!, 'utf8');
      expect(csv).toContain(nome);
      expect(csv).toContain(email);
      expect(site.problems(page)).toEqual([]);
      await context.close();
    });
  }

  it('a person erases their data from the page (pt-BR), and the lead is gone', async () => {
    const words = WORDS['pt-BR'];
    const email = 'apagar.pagina@pessoa.example.com.br';
    await lead('Apagar Pela Página', email);
    const { context, page } = await site.page('pt-BR');
    await page.goto(`${site.base}/privacy`);
    await page.check(`label:has-text("${words.erase}") input`);
    await page.fill('input[type="email"]', email);
    await page.press('input[type="email"]', 'Enter');
    await page.waitForSelector('input[name="code"]');
    const code = /\d{6}/.exec((await site.mail(email, 1)).parsed.text!)![0];
    await page.fill('input[name="code"]', code);
    await page.press('input[name="code"]', 'Enter');
    await page.waitForSelector('main p');
    expect(await page.textContent('main p')).toBe(words.erased);
    await site.check(page, 'privacy-erased-pt-BR');
    expect(await site.t.dataSource.query(`SELECT id FROM leads WHERE email_folded = '${email}'`)).toEqual([]);
    expect(site.problems(page)).toEqual([]);
    await context.close();
  });
});
