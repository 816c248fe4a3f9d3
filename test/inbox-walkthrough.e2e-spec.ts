/** @system issue 35's walk-through in Chromium, in pt-BR and English: sign in by mailed code, search, release, export, settings, erasure, sign out */
import { readFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { Lead } from '../src/leads/lead.entity.js';
import { HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser } from './support/inbox-browser.js';
import { eventually } from './support/eventually.js';
import { describeIf } from './support/skips.js';
import { subscribedReceiver, WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The "Done when", as a person of the marketing team does it: sign in with the code from a real SMTP server,
 * search "joao" and find "João", open the lead, release a held lead and see its webhook arrive, export CSV and read
 * the file back, add a recipient, create an API client and use its secret, erase a person after the typed
 * confirmation, sign out. Every page checked with axe-core and photographed at 375 and 1280 px
 * (test-artifacts/inbox/walk-*.png).
 */
describeIf(['chromium'], HAVE_CHROMIUM)('the inbox, walked through', () => {
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

  for (const language of ['pt-BR', 'en'] as const) {
    it(`works the leads end to end (${language})`, async () => {
      const words = {
        'pt-BR': { release: 'Liberar selecionados', csv: 'Exportar planilha (CSV)', erase: 'Apagar definitivamente', signOut: 'Sair' },
        en: { release: 'Release selected', csv: 'Export spreadsheet (CSV)', erase: 'Erase for good', signOut: 'Sign out' },
      }[language];
      const tag = language === 'en' ? 'en' : 'pt';
      const me = `ana.${tag}@empresa.example`;
      const t = inbox.t;
      await inbox.person('admin', me);
      // Leads as they come in: one from a form, one held for its throwaway address.
      const joao = await t.http
        .post('/api/v1/lead')
        .send({ nome: 'João Pereira', email: `joao.${tag}@cliente.example`, empresa: 'Pereira & Filhos', origem: `walk-${tag}` });
      expect(joao.status).toBe(201);
      const held = await t.http.post('/api/v1/lead').send({ nome: 'Talvez Real', email: `talvez.${tag}@mailinator.com`, origem: `walk-${tag}` });
      expect(held.status).toBe(201);
      expect((await t.dataSource.getRepository(Lead).findOneByOrFail({ id: held.body.id })).screeningVerdict).toBe('held');

      const { context, page } = await inbox.page(language);
      page.on('dialog', (dialog) => {
        throw new Error(`a dialog opened: ${dialog.message()}`);
      });
      try {
        // Sign in: the address, Enter; the code from the mail, Enter; the leads.
        await inbox.signIn(page, me, { screenshots: `walk-${tag}` });
        expect(page.url()).toBe(`${base}/inbox/leads`);
        expect(await page.locator('html').getAttribute('lang')).toBe(language);
        await inbox.check(page, `walk-${tag}-03-leads`);

        // Search "joao": "João" found, the list replaced.
        await page.getByRole('searchbox').fill('joao');
        await page.getByRole('searchbox').press('Enter');
        await page.waitForURL(/q=joao/);
        await page.locator('table.leads tbody tr').first().waitFor();
        expect(await page.locator('table.leads tbody tr').allInnerTexts()).toEqual([expect.stringContaining('João Pereira')]);
        await inbox.check(page, `walk-${tag}-04-search`);

        // Open the lead.
        await page.getByRole('link', { name: 'João Pereira' }).click();
        await page.waitForURL(`${base}/inbox/leads/${joao.body.id}`);
        await inbox.check(page, `walk-${tag}-05-lead`);

        // Release the held lead from the queue; its webhook arrives.
        await page.locator('a[href="/inbox/held"]').first().click();
        await page.waitForURL(`${base}/inbox/held`);
        await inbox.check(page, `walk-${tag}-06-held`);
        await page.locator(`input[name="id"][value="${held.body.id}"]`).check();
        await page.getByRole('button', { name: words.release }).click();
        await page.waitForURL(/released=1/);
        const arrived = await eventually(() => {
          const events = receiver.received.map((r) => JSON.parse(r.body)).filter((event) => event.data?.id === held.body.id);
          return events.length ? events : undefined;
        });
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
        await inbox.check(page, `walk-${tag}-07-recipients`);
        expect((await inbox.mail(colleague, 1)).parsed.text).toContain('/notifications/confirm');

        // Create an API client and use its secret.
        await page.goto(`${base}/inbox/settings/clients`);
        await page.locator('#client-name').fill(`CRM ${tag}`);
        await page.locator('input[name="scope"][value="leads:read"]').check();
        await page.locator('#client-name').press('Enter');
        await page.locator('#client-secret').waitFor();
        await inbox.check(page, `walk-${tag}-08-client-secret`);
        const clientId = await page.locator('#client-id').innerText();
        const secret = await page.locator('#client-secret').innerText();
        const token = await t.http.post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
        expect(token.status).toBe(200);
        const listed = await t.http.get(`/api/v1/leads?q=joao&origem=walk-${tag}`).set('Authorization', `Bearer ${token.body.access_token}`);
        expect([listed.status, listed.body.data.map((lead: { id: string }) => lead.id)]).toEqual([200, [joao.body.id]]);

        // Erase a person after the typed confirmation.
        await page.goto(`${base}/inbox/leads/${joao.body.id}`);
        await page.locator('#confirmation').fill(`joao.${tag}@cliente.example`);
        await inbox.check(page, `walk-${tag}-09-erase`);
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
        expect(inbox.problems(page)).toEqual([]);
      } finally {
        await context.close();
      }
      // A walk through every page, with axe and two screenshots at each, on a shared 2-core machine.
    }, 240_000);
  }
});
