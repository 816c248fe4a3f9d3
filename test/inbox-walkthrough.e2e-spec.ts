/** @system issue 35's walk-through in Chromium, in pt-BR and English: sign in by mailed code, search, release, export, settings, erasure, sign out */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { parse as parseCsv } from 'csv-parse/sync';
import { Lead } from '../src/leads/lead.entity.js';
import { PeopleService } from '../src/people/people.service.js';
import { codeOf } from './support/inbox-session.js';
import { operatorToken } from './support/operator-token.js';
import { freePort } from './support/server-process.js';
import { describeIf } from './support/skips.js';
import { SmtpSink } from './support/smtp-sink.js';
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
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'inbox-walkthrough');
const AXE = readFileSync(join(process.cwd(), 'node_modules/axe-core/axe.min.js'), 'utf8');

/**
 * The "Done when", as a person of the marketing team does it: sign in with the code from a real SMTP server,
 * search "joao" and find "João", open the lead, release a held lead and see its webhook arrive, export CSV and read
 * the file back, add a recipient, create an API client and use its secret, erase a person after the typed
 * confirmation, sign out. Every page checked with axe-core and photographed at 375 and 1280 px.
 */
describeIf(['chromium'], existsSync(CHROMIUM))('the inbox, walked through', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sink = await SmtpSink.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      PUBLIC_BASE_URL: base,
      SMTP_URL: sink.url,
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL: '20ms',
      WEBHOOK_RETRY_SCHEDULE: '50ms',
    });
    await t.app.listen(port, '127.0.0.1');
    receiver = await WebhookReceiver.start();
    const manager = await operatorToken(t, 'webhooks:manage');
    expect((await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url })).status).toBe(201);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await sink?.close();
    await t?.close();
  });

  /** No serious or critical axe-core finding, and a screenshot at 375 and at 1280 px of the page as it is. */
  async function look(page: Page, name: string): Promise<void> {
    const width = page.viewportSize()!.width;
    for (const each of [375, 1280]) {
      await page.setViewportSize({ width: each, height: 900 });
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${each}.png`), fullPage: true });
    }
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(`${AXE};0`);
    const violations = (await page.evaluate('axe.run(document).then((r) => r.violations)')) as { id: string; impact: string | null }[];
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${name}: ${v.id}`)).toEqual([]);
  }

  async function mailTo(address: string, count = 1): Promise<string> {
    for (let i = 0; i < 250 && sink.to(address).length < count; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const mails = sink.to(address);
    expect(mails.length).toBeGreaterThanOrEqual(count);
    return mails[count - 1].parsed.text ?? '';
  }

  for (const language of ['pt-BR', 'en'] as const) {
    it(`works the leads end to end (${language})`, async () => {
      const words = {
        'pt-BR': { release: 'Liberar selecionados', csv: 'Exportar planilha (CSV)', erase: 'Apagar definitivamente', signOut: 'Sair' },
        en: { release: 'Release selected', csv: 'Export spreadsheet (CSV)', erase: 'Erase for good', signOut: 'Sign out' },
      }[language];
      const tag = language === 'en' ? 'en' : 'pt';
      const me = `ana.${tag}@empresa.example`;
      await t.app.get(PeopleService).add(me, 'admin');
      // Leads as they come in: one from a form, one held for its throwaway address.
      const joao = await t.http
        .post('/api/v1/lead')
        .send({ nome: 'João Pereira', email: `joao.${tag}@cliente.example`, empresa: 'Pereira & Filhos', origem: `walk-${tag}` });
      expect(joao.status).toBe(201);
      const held = await t.http.post('/api/v1/lead').send({ nome: 'Talvez Real', email: `talvez.${tag}@mailinator.com`, origem: `walk-${tag}` });
      expect(held.status).toBe(201);
      expect((await t.dataSource.getRepository(Lead).findOneByOrFail({ id: held.body.id })).screeningVerdict).toBe('held');

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: language, acceptDownloads: true });
      const page = await context.newPage();
      page.on('dialog', (dialog) => {
        throw new Error(`a dialog opened: ${dialog.message()}`);
      });
      try {
        // Sign in: the address, Enter; the code from the mail, Enter; the leads.
        await page.goto(`${base}/inbox`);
        await page.waitForURL(/\/inbox\/sign-in/);
        await look(page, `${tag}-01-sign-in`);
        await page.locator('input[type="email"]').fill(me);
        await page.locator('input[type="email"]').press('Enter');
        await page.locator('input[name="code"]').waitFor();
        await look(page, `${tag}-02-code`);
        const code = codeOf(await mailTo(me));
        await page.locator('input[name="code"]').fill(code);
        await page.locator('input[name="code"]').press('Enter');
        await page.waitForURL(`${base}/inbox/leads`);
        expect(await page.locator('html').getAttribute('lang')).toBe(language);
        await look(page, `${tag}-03-leads`);

        // Search "joao": "João" found, the list replaced.
        await page.getByRole('searchbox').fill('joao');
        await page.getByRole('searchbox').press('Enter');
        await page.waitForURL(/q=joao/);
        await page.locator('table.leads tbody tr').first().waitFor();
        expect(await page.locator('table.leads tbody tr').allInnerTexts()).toEqual([expect.stringContaining('João Pereira')]);
        await look(page, `${tag}-04-search`);

        // Open the lead.
        await page.getByRole('link', { name: 'João Pereira' }).click();
        await page.waitForURL(`${base}/inbox/leads/${joao.body.id}`);
        await look(page, `${tag}-05-lead`);

        // Release the held lead from the queue; its webhook arrives.
        await page.locator('a[href="/inbox/held"]').first().click();
        await page.waitForURL(`${base}/inbox/held`);
        await look(page, `${tag}-06-held`);
        const before = receiver.received.filter((r) => JSON.parse(r.body).data?.id === held.body.id).length;
        await page.locator(`input[name="id"][value="${held.body.id}"]`).check();
        await page.getByRole('button', { name: words.release }).click();
        await page.waitForURL(/released=1/);
        for (let i = 0; i < 250 && receiver.received.filter((r) => JSON.parse(r.body).data?.id === held.body.id).length === before; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const arrived = receiver.received.map((r) => JSON.parse(r.body)).filter((event) => event.data?.id === held.body.id);
        expect(arrived.map((event) => event.type)).toEqual(['lead.received']);

        // Export CSV and read the file back.
        await page.goto(`${base}/inbox/leads?origem=walk-${tag}`);
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: words.csv }).click()]);
        const rows = parseCsv(readFileSync(await download.path(), 'utf8').replace(/^\ufeff/, ''), { delimiter: ';', columns: true }) as Record<
          string,
          string
        >[];
        expect(rows.map((row) => row.Nome).sort()).toEqual(['João Pereira', 'Talvez Real']);
        expect(rows.find((row) => row.Nome === 'João Pereira')?.Empresa).toBe('Pereira & Filhos');

        // Add a recipient: its confirmation mail goes out.
        const colleague = `bia.${tag}@empresa.example`;
        await page.goto(`${base}/inbox/settings/recipients`);
        await page.locator('#recipient-email').fill(colleague);
        await page.locator('#recipient-email').press('Enter');
        await page.waitForURL(`${base}/inbox/settings/recipients**`);
        expect(await page.locator('main').innerText()).toContain(colleague);
        await look(page, `${tag}-07-recipients`);
        expect(await mailTo(colleague)).toContain('/notifications/confirm');

        // Create an API client and use its secret.
        await page.goto(`${base}/inbox/settings/clients`);
        await page.locator('#client-name').fill(`CRM ${tag}`);
        await page.locator('input[name="scope"][value="leads:read"]').check();
        await page.locator('#client-name').press('Enter');
        await page.locator('#client-secret').waitFor();
        await look(page, `${tag}-08-client-secret`);
        const clientId = await page.locator('#client-id').innerText();
        const secret = await page.locator('#client-secret').innerText();
        const token = await t.http.post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
        expect(token.status).toBe(200);
        const listed = await t.http.get(`/api/v1/leads?q=joao&origem=walk-${tag}`).set('Authorization', `Bearer ${token.body.access_token}`);
        expect([listed.status, listed.body.data.map((lead: { id: string }) => lead.id)]).toEqual([200, [joao.body.id]]);

        // Erase a person after the typed confirmation.
        await page.goto(`${base}/inbox/leads/${joao.body.id}`);
        await page.locator('#confirmation').fill(`joao.${tag}@cliente.example`);
        await look(page, `${tag}-09-erase`);
        await page.getByRole('button', { name: words.erase }).click();
        await page.waitForURL(/erased=1/);
        expect(await t.dataSource.getRepository(Lead).findOneBy({ id: joao.body.id })).toBeNull();
        expect((await page.goto(`${base}/inbox/leads/${joao.body.id}`))?.status()).toBe(404);

        // Sign out: the session is over.
        await page.goto(`${base}/inbox/leads`);
        await page.getByRole('button', { name: words.signOut }).click();
        await page.waitForURL(/\/inbox\/sign-in/);
        await page.goto(`${base}/inbox/leads`);
        await page.waitForURL(/\/inbox\/sign-in\?return=/);
      } finally {
        await context.close();
      }
    });
  }
});
