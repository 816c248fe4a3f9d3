/** @system the inbox's lead pages in Chromium, in pt-BR and English: search, a lead, release, export, erasure; axe and screenshots */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { parse as parseCsv } from 'csv-parse/sync';
import { Lead } from '../src/leads/lead.entity.js';
import { HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, Language, scrollsSideways } from './support/inbox-browser.js';
import { storeScreenedLead } from './support/screened-leads.js';
import { describeIf } from './support/skips.js';
import { subscribedReceiver, WebhookReceiver } from './support/webhook-receiver.js';

const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';

describeIf(['chromium'], HAVE_CHROMIUM)('the lead pages in Chromium', () => {
  let inbox: InboxBrowser;
  let base: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    inbox = await InboxBrowser.start({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms' });
    base = inbox.base;
    receiver = await subscribedReceiver(inbox.t);
  });
  afterAll(async () => {
    await receiver?.close();
    await inbox?.close();
  });

  /** A browser signed in (by the mailed code) as a new person of this role, in this language. */
  async function signedIn(role: 'marketer' | 'admin', language: Language, email: string): Promise<Page> {
    await inbox.person(role, email);
    const { page } = await inbox.page(language);
    // A lead's markup must never run: an alert would be a dialog.
    page.on('dialog', (dialog) => {
      throw new Error(`a dialog opened: ${dialog.message()}`);
    });
    await inbox.signIn(page, email);
    return page;
  }

  /** axe-core and screenshots at 375 and 1280 px; the page fits both widths (tables scroll in their own box); no script of a lead ran. */
  async function check(page: Page, path: string, name: string): Promise<void> {
    expect((await page.goto(`${base}${path}`))?.status()).toBe(200);
    await inbox.check(page, `leads-${name}`);
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await scrollsSideways(page)).toBe(false);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await page.title()).not.toContain('pwned');
    expect(inbox.problems(page)).toEqual([]);
  }

  for (const language of ['pt-BR', 'en'] as const) {
    const words = {
      'pt-BR': {
        count: '1 lead',
        release: 'Liberar selecionados',
        csv: 'Exportar planilha (CSV)',
        erase: 'Apagar definitivamente',
        erased: 'Dados apagados: 1 lead(s).',
      },
      en: { count: '1 lead', release: 'Release selected', csv: 'Export spreadsheet (CSV)', erase: 'Erase for good', erased: 'Data erased: 1 lead(s).' },
    }[language];

    describe(language, () => {
      const origem = `browser-${language}`;
      let joao: Lead;
      let held: Lead;
      let marketer: Page;
      let admin: Page;

      beforeAll(async () => {
        const t = inbox.t;
        joao = await storeScreenedLead(t, 1, 'accepted', { origem, nome: 'João Silva', email: `joao.${language}@empresa.example`, empresa: 'ACME Ltda' });
        await storeScreenedLead(t, 2, 'accepted', { origem, nome: 'Maria Souza', email: `maria.${language}@empresa.example` });
        held = await storeScreenedLead(t, 3, 'held', {
          origem,
          nome: `Bot ${HOSTILE}`,
          email: `bot.${language}@empresa.example`,
          mensagem: HOSTILE,
          empresa: HOSTILE,
          context: { page_title: HOSTILE, utm_source: HOSTILE },
        });
        marketer = await signedIn('marketer', language, `marketer.${language}@empresa.example`);
        admin = await signedIn('admin', language, `admin.${language}@empresa.example`);
      });

      it('searches by Enter: "joao" finds "João", the list swapped in place and the address updated', async () => {
        const page = marketer;
        await page.goto(`${base}/inbox/leads?origem=${origem}`);
        await page.evaluate('window.__samePage = true');
        await page.getByRole('searchbox').fill('joao');
        await page.getByRole('searchbox').press('Enter');
        await page.waitForURL(/q=joao/);
        await page.locator('#leads-count', { hasText: words.count }).waitFor();
        expect(await page.locator('table.leads tbody tr').allInnerTexts()).toEqual([expect.stringContaining('João Silva')]);
        // htmx replaced the list: the same document, not a new page.
        expect(await page.evaluate('window.__samePage')).toBe(true);
        await page.getByRole('link', { name: 'João Silva' }).click();
        await page.waitForURL(`${base}/inbox/leads/${joao.id}`);
        expect(await page.locator('h1').innerText()).toContain('João Silva');
        expect(inbox.problems(page)).toEqual([]);
        // Without script, the same form is a plain GET.
        const plain = await inbox.browser.newContext({ javaScriptEnabled: false, locale: language });
        try {
          await plain.addCookies(await page.context().cookies());
          const bare = await plain.newPage();
          await bare.goto(`${base}/inbox/leads?origem=${origem}`);
          await bare.getByRole('searchbox').fill('JOÃO');
          await bare.getByRole('searchbox').press('Enter');
          await bare.waitForURL(/q=JO%C3%83O/);
          expect(await bare.locator('table.leads tbody tr').count()).toBe(1);
        } finally {
          await plain.close();
        }
      });

      it('shows a hostile lead as text, and releases it from the held queue: its webhook arrives', async () => {
        const page = marketer;
        await page.goto(`${base}/inbox/leads/${held.id}`);
        expect(await page.locator('.field-empresa').innerText()).toBe(HOSTILE);
        expect(await page.locator('img[src="x"]').count()).toBe(0);
        expect(await page.title()).not.toContain('pwned');
        await page.goto(`${base}/inbox/held?origem=${origem}`);
        await page.locator(`input[name="id"][value="${held.id}"]`).check();
        const before = receiver.received.length;
        await page.getByRole('button', { name: words.release }).click();
        await page.waitForURL(/released=1/);
        const [delivery] = (await receiver.waitFor(before + 1)).slice(before);
        expect(JSON.parse(delivery.body)).toMatchObject({ type: 'lead.received', data: { id: held.id } });
        expect(inbox.problems(page)).toEqual([]);
      });

      it('exports the current filters as the pt-BR CSV and reads the file back', async () => {
        const page = marketer;
        await page.goto(`${base}/inbox/leads?origem=${origem}&q=joao`);
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: words.csv }).click()]);
        const file = readFileSync(await download.path(), 'utf8');
        expect(download.suggestedFilename()).toMatch(/^leads-\d{4}-\d{2}-\d{2}\.csv$/);
        const rows = parseCsv(file.replace(/^\ufeff/, ''), { delimiter: ';', columns: true }) as Record<string, string>[];
        expect(rows.map((row) => [row.Nome, row['E-mail'], row.Empresa])).toEqual([['João Silva', joao.email, 'ACME Ltda']]);
      });

      it('erases a person after the typed confirmation', async () => {
        const person = await storeScreenedLead(inbox.t, 4, 'accepted', { origem, nome: 'Pessoa Apagável', email: `apagar.${language}@empresa.example` });
        const page = admin;
        await page.goto(`${base}/inbox/leads/${person.id}`);
        await page.getByRole('button', { name: words.erase }).click();
        // The browser asks for the confirmation first (required), then the service checks it.
        expect(page.url()).toBe(`${base}/inbox/leads/${person.id}`);
        await page.getByLabel(person.email).fill('errado@empresa.example');
        await page.getByRole('button', { name: words.erase }).click();
        await page.locator('#erase-error').waitFor();
        await page.getByLabel(person.email).fill(person.email);
        await page.getByRole('button', { name: words.erase }).click();
        await page.waitForURL(/erased=1/);
        expect(await page.locator('.notice').innerText()).toBe(words.erased);
        expect(await inbox.t.dataSource.getRepository(Lead).findOneBy({ id: person.id })).toBeNull();
      });

      it('has no serious axe finding and fits 375 and 1280 px: leads, a lead, the held and spam queues', async () => {
        await check(admin, `/inbox/leads?origem=${origem}`, `list-${language}`);
        await check(admin, `/inbox/leads/${held.id}`, `lead-${language}`);
        await check(admin, `/inbox/held?origem=${origem}&screening=spam`, `spam-${language}`);
        await storeScreenedLead(inbox.t, 5, 'held', { origem, nome: 'Outro Retido', email: `retido.${language}@empresa.example` });
        await check(admin, `/inbox/held?origem=${origem}`, `held-${language}`);
      });
    });
  }
});
