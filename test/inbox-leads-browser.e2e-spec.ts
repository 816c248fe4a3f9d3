/** @system the inbox's lead pages in Chromium, in pt-BR and English: search, a lead, release, export, erasure; axe and screenshots */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { parse as parseCsv } from 'csv-parse/sync';
import { Lead } from '../src/leads/lead.entity.js';
import { InboxPerson, signedInAs } from './support/inbox-session.js';
import { operatorToken } from './support/operator-token.js';
import { storeScreenedLead } from './support/screened-leads.js';
import { freePort } from './support/server-process.js';
import { describeIf } from './support/skips.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'inbox-leads');
const AXE = readFileSync(join(process.cwd(), 'node_modules/axe-core/axe.min.js'), 'utf8');
const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';
const WIDTHS = [375, 1280];

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (run through the DevTools protocol, which the page's CSP does not govern). */
async function axeFindings(page: Page): Promise<{ id: string; impact: string | null; targets: string[] }[]> {
  await page.evaluate(`${AXE};0`);
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((node) => node.target.join(' ')) }));
}

describeIf(['chromium'], existsSync(CHROMIUM))('the lead pages in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let manager: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base, WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_RETRY_SCHEDULE: '50ms' });
    await t.app.listen(port, '127.0.0.1');
    manager = await operatorToken(t, 'webhooks:manage');
    receiver = await WebhookReceiver.start();
    const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
    expect(endpoint.status).toBe(201);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  /** A browser of this person, in this language, at this width, signed in by their session cookie. */
  async function browserOf(person: InboxPerson, language: 'pt-BR' | 'en', width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, locale: language, acceptDownloads: true });
    await context.addCookies([{ name: 'inbox_session', value: person.cookie.split('=')[1], url: base }]);
    const page = await context.newPage();
    // A lead's markup must never run: an alert would be a dialog, a changed title a script that ran.
    page.on('dialog', (dialog) => {
      throw new Error(`a dialog opened: ${dialog.message()}`);
    });
    return { context, page };
  }

  /** Screenshots at 375 and 1280 px, and no serious or critical axe finding at either. */
  async function check(person: InboxPerson, language: 'pt-BR' | 'en', path: string, name: string): Promise<void> {
    for (const width of WIDTHS) {
      const { context, page } = await browserOf(person, language, width);
      try {
        const res = await page.goto(`${base}${path}`);
        expect(res?.status()).toBe(200);
        await page.screenshot({ path: join(ARTIFACTS, `${name}-${language}-${width}.png`), fullPage: true });
        expect(await axeFindings(page)).toEqual([]);
        // Usable at the width: nothing makes the page itself scroll sideways (tables scroll in their own box).
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
        expect(await page.title()).not.toContain('pwned');
      } finally {
        await context.close();
      }
    }
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
      let origem: string;
      let joao: Lead;
      let held: Lead;
      let marketer: InboxPerson;
      let admin: InboxPerson;

      beforeAll(async () => {
        origem = `browser-${language}`;
        marketer = await signedInAs(t, 'marketer');
        admin = await signedInAs(t, 'admin');
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
      });

      it('searches by Enter: "joao" finds "João", the list swapped in place and the address updated', async () => {
        const { context, page } = await browserOf(marketer, language);
        try {
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
        } finally {
          await context.close();
        }
        // Without script, the same form is a plain GET.
        const plain = await browser.newContext({ javaScriptEnabled: false, locale: language });
        try {
          await plain.addCookies([{ name: 'inbox_session', value: marketer.cookie.split('=')[1], url: base }]);
          const page = await plain.newPage();
          await page.goto(`${base}/inbox/leads?origem=${origem}`);
          await page.getByRole('searchbox').fill('JOÃO');
          await page.getByRole('searchbox').press('Enter');
          await page.waitForURL(/q=JO%C3%83O/);
          expect(await page.locator('table.leads tbody tr').count()).toBe(1);
        } finally {
          await plain.close();
        }
      });

      it('shows a hostile lead as text, and releases it from the held queue: its webhook arrives', async () => {
        const { context, page } = await browserOf(marketer, language);
        try {
          await page.goto(`${base}/inbox/leads/${held.id}`);
          expect(await page.locator('.field-empresa').innerText()).toBe(HOSTILE);
          expect(await page.locator('img[src="x"]').count()).toBe(0);
          expect(await page.title()).not.toContain('pwned');
          await page.goto(`${base}/inbox/held?origem=${origem}`);
          await page.getByRole('checkbox').first().check();
          const before = receiver.received.length;
          await page.getByRole('button', { name: words.release }).click();
          await page.waitForURL(/released=1/);
          const [delivery] = (await receiver.waitFor(before + 1)).slice(before);
          expect(JSON.parse(delivery.body)).toMatchObject({ type: 'lead.received', data: { id: held.id } });
        } finally {
          await context.close();
        }
      });

      it('exports the current filters as the pt-BR CSV and reads the file back', async () => {
        const { context, page } = await browserOf(marketer, language);
        try {
          await page.goto(`${base}/inbox/leads?origem=${origem}&q=joao`);
          const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: words.csv }).click()]);
          const file = readFileSync(await download.path(), 'utf8');
          expect(download.suggestedFilename()).toMatch(/^leads-\d{4}-\d{2}-\d{2}\.csv$/);
          const rows = parseCsv(file.replace(/^\ufeff/, ''), { delimiter: ';', columns: true }) as Record<string, string>[];
          expect(rows.map((row) => [row.Nome, row['E-mail'], row.Empresa])).toEqual([['João Silva', joao.email, 'ACME Ltda']]);
        } finally {
          await context.close();
        }
      });

      it('erases a person after the typed confirmation', async () => {
        const person = await storeScreenedLead(t, 4, 'accepted', { origem, nome: 'Pessoa Apagável', email: `apagar.${language}@empresa.example` });
        const { context, page } = await browserOf(admin, language);
        try {
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
          expect(await t.dataSource.getRepository(Lead).findOneBy({ id: person.id })).toBeNull();
        } finally {
          await context.close();
        }
      });

      it('has no serious axe finding and fits 375 and 1280 px: leads, a lead, the held and spam queues', async () => {
        await check(admin, language, `/inbox/leads?origem=${origem}`, 'leads');
        await check(admin, language, `/inbox/leads/${held.id}`, 'lead');
        await check(admin, language, `/inbox/held?origem=${origem}&screening=spam`, 'held-spam');
        await storeScreenedLead(t, 5, 'held', { origem, nome: 'Outro Retido', email: `retido.${language}@empresa.example` });
        await check(admin, language, `/inbox/held?origem=${origem}`, 'held');
      });
    });
  }
});
