/** @system the claim's page in Chromium, in pt-BR and English: an owner confirms an agent with both codes, axe-core, screenshots at 375 and 1280 px */
import { decodeJwt } from 'jose';
import { CHROMIUM, HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, Language, scrollsSideways, WIDTHS } from './support/inbox-browser.js';
import { describeIf } from './support/skips.js';

const describeBrowser = describeIf(['chromium'], HAVE_CHROMIUM);
const CLAIM_GRANT = 'urn:workos:agent-auth:grant-type:claim';

const WORDS: Record<Language, { title: string; what: string; wrong: string; done: string }> = {
  'pt-BR': {
    title: 'Confirmar um agente',
    what: 'agir em seu nome',
    wrong: 'Um dos códigos está incorreto. Restam 4 tentativas.',
    done: 'Pronto: o agente agora age em seu nome. Ele recebe a confirmação na próxima consulta.',
  },
  en: {
    title: 'Confirm an agent',
    what: 'act for you',
    wrong: 'One of the codes is wrong. 4 tries left.',
    done: 'Done: the agent now acts for you. It learns so at its next poll.',
  },
};

describeBrowser(HAVE_CHROMIUM ? `the claim's page (Chromium at ${CHROMIUM})` : `the claim's page (SKIPPED: ${CHROMIUM} not found)`, () => {
  let site: InboxBrowser;

  beforeAll(async () => {
    site = await InboxBrowser.start({ VERIFICATION_MAIL_DAILY_LIMIT: '100' });
  }, 60_000);
  afterAll(() => site?.close());

  for (const language of ['pt-BR', 'en'] as const) {
    it(`an owner confirms an agent with the user code and the mailed code, in ${language}, accessible and fitting 375 and 1280 px`, async () => {
      const words = WORDS[language];
      const email = `dono.${language.toLowerCase()}@empresa.example.com.br`;
      const registration = (await site.t.http.post('/api/v1/agent/identity').send({ type: 'service_auth', login_hint: email, client_name: 'Robô Secreto' }))
        .body as { claim_token: string; claim_attempt: { user_code: string; verification_uri: string } };
      const { context, page } = await site.page(language);
      await page.goto(registration.claim_attempt.verification_uri);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.textContent('h1')).toBe(words.title);
      expect(await page.textContent('main')).toContain(words.what);
      expect(await page.textContent('main')).not.toContain('Robô Secreto');
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        expect(await scrollsSideways(page)).toBe(false);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await site.check(page, `claim-${language}`);

      const code = /\d{6}/.exec((await site.mail(email, 1)).parsed.text!)![0];
      await page.fill('input[name="user_code"]', registration.claim_attempt.user_code);
      await page.fill('input[name="email_code"]', code === '000000' ? '111111' : '000000');
      await page.press('input[name="email_code"]', 'Enter');
      await page.waitForSelector('[role="alert"]');
      expect(await page.textContent('[role="alert"]')).toBe(words.wrong);
      await site.check(page, `claim-wrong-${language}`);
      await page.fill('input[name="user_code"]', registration.claim_attempt.user_code);
      await page.fill('input[name="email_code"]', code);
      await page.press('input[name="email_code"]', 'Enter');
      await page.waitForSelector(`main p:text-is("${words.done}")`);
      await site.check(page, `claim-done-${language}`);
      expect(site.problems(page)).toEqual([]);
      await context.close();

      const claimed = await site.t.http.post('/oauth2/token').type('form').send({ grant_type: CLAIM_GRANT, claim_token: registration.claim_token });
      expect(claimed.status).toBe(200);
      expect(decodeJwt(claimed.body.identity_assertion)).toMatchObject({ email, email_verified: true });
    });
  }
});
