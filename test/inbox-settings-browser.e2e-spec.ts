/** @system the inbox's settings pages in Chromium, in pt-BR and English */
import type { Page } from 'playwright-core';
import { describeIf } from './support/skips.js';
import { HAVE_CHROMIUM } from './support/chromium.js';
import { InboxBrowser, Language, scrollsSideways } from './support/inbox-browser.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * An admin works the settings as a person would, in each language: the index, a colleague added with a role, a
 * notification recipient added (its confirmation mail arrives), a webhook endpoint created (its secret shown once),
 * tested (the delivery arrives and shows as delivered), an API client created whose secret gets a token. Every page
 * passes axe (no serious or critical violation), fits 375 px without scrolling sideways, and is saved as screenshots
 * at 375 and 1280 px (test-artifacts/inbox/settings-*).
 */
const WORDS = {
  'pt-BR': {
    settings: 'Configurações',
    people: 'Pessoas e papéis',
    added: 'Pessoa adicionada.',
    recipients: 'Destinatários de notificações',
    recipientAdded: 'Destinatário adicionado; o e-mail de confirmação está a caminho.',
    webhooks: 'Webhooks',
    create: 'Criar endpoint',
    kept: 'Já guardei o segredo',
    test: 'Enviar um teste',
    delivered: 'entregue',
    clients: 'Clientes da API',
    createClient: 'Criar cliente',
    addRecipient: 'Adicionar e enviar confirmação',
    addPerson: 'Adicionar',
  },
  en: {
    settings: 'Settings',
    people: 'People and roles',
    added: 'Person added.',
    recipients: 'Notification recipients',
    recipientAdded: 'Recipient added; the confirmation e-mail is on its way.',
    webhooks: 'Webhooks',
    create: 'Create endpoint',
    kept: 'I have kept the secret',
    test: 'Send a test',
    delivered: 'delivered',
    clients: 'API clients',
    createClient: 'Create client',
    addRecipient: 'Add and send the confirmation',
    addPerson: 'Add',
  },
} as const;

describeIf(['chromium'], HAVE_CHROMIUM)('inbox settings in Chromium', () => {
  let inbox: InboxBrowser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    inbox = await InboxBrowser.start({ WEBHOOKS_ALLOW_PRIVATE: 'true' });
  });
  afterAll(async () => {
    await inbox?.close();
    await receiver?.close();
  });

  /** axe, screenshots at 375 and 1280 px, no sideways scroll at 375 px, nothing refused by the CSP. */
  async function look(page: Page, name: string): Promise<void> {
    await inbox.check(page, name);
    await page.setViewportSize({ width: 375, height: 900 });
    expect(await scrollsSideways(page)).toBe(false);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(inbox.problems(page)).toEqual([]);
  }

  it.each(['pt-BR', 'en'] as Language[])(
    'an admin manages people, recipients, webhooks and API clients (%s)',
    async (language) => {
      const words = WORDS[language];
      const shot = (name: string) => `settings-${language}-${name}`;
      const admin = await inbox.person('admin', `admin.${language}@empresa.example`);
      const { context, page } = await inbox.page(language);
      await inbox.signIn(page, admin.email);

      await page.goto(`${inbox.base}/inbox/settings`);
      await expect(page.locator('h1').textContent()).resolves.toBe(words.settings);
      await look(page, shot('index'));

      // People: a colleague added with a role, by keyboard.
      await page.click(`a:text-is("${words.people}")`);
      await page.fill('#person-email', `colega.${language}@empresa.example`);
      await page.check('input[name="role"][value="marketer"]');
      await Promise.all([page.waitForURL(/notice=added/), page.press('#person-email', 'Enter')]);
      await expect(page.locator('.notice').textContent()).resolves.toBe(words.added);
      await look(page, shot('people'));

      // A notification recipient: its confirmation e-mail arrives.
      await page.goto(`${inbox.base}/inbox/settings`);
      await page.click(`a:text-is("${words.recipients}")`);
      const recipient = `vendas.${language}@empresa.example`;
      await page.fill('#recipient-email', recipient);
      await Promise.all([page.waitForURL(/notice=added/), page.click(`button:text-is("${words.addRecipient}")`)]);
      await expect(page.locator('.notice').textContent()).resolves.toBe(words.recipientAdded);
      expect((await inbox.mail(recipient, 1)).parsed.text).toMatch(/\/notifications\/confirm\?token=/);
      await look(page, shot('recipients'));

      // A webhook endpoint: created (its secret shown once), tested, the delivery shown as delivered.
      await page.goto(`${inbox.base}/inbox/settings/webhooks`);
      await page.fill('#webhook-url', receiver.url);
      await page.fill('#webhook-description', `CRM <${language}>`);
      await look(page, shot('webhooks'));
      await page.click(`button:text-is("${words.create}")`);
      const secret = await page.locator('#webhook-secret').textContent();
      expect(secret).toMatch(/^whsec_/);
      await look(page, shot('webhook-secret'));
      await page.click(`a:text-is("${words.kept}")`);
      expect(await page.content()).not.toContain(secret!);
      const received = receiver.received.length;
      await page.click(`button:text-is("${words.test}")`);
      await receiver.waitFor(received + 1);
      for (let tries = 0; (await page.locator('td .badge').allTextContents())[0] !== words.delivered; tries++) {
        if (tries === 100) throw new Error('the test delivery was not shown as delivered');
        await new Promise((resolve) => setTimeout(resolve, 100));
        await page.reload();
      }
      await look(page, shot('webhook'));

      // An API client: created with two scopes, its secret gets a token.
      await page.goto(`${inbox.base}/inbox/settings/clients`);
      await page.fill('#client-name', `Planilha ${language}`);
      await page.check('input[name="scope"][value="leads:export"]');
      await look(page, shot('clients'));
      await page.click(`button:text-is("${words.createClient}")`);
      const clientId = (await page.locator('#client-id').textContent())!;
      const clientSecret = (await page.locator('#client-secret').textContent())!;
      await look(page, shot('client-secret'));
      const token = await fetch(`${inbox.base}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
      });
      expect([token.status, ((await token.json()) as { scope: string }).scope]).toEqual([200, 'leads:read leads:export']);
      await page.click(`a:text-is("${words.kept}")`);
      expect(await page.content()).not.toContain(clientSecret);
      await look(page, shot('clients-after'));
      await context.close();
    },
    300_000,
  );
});
