/** @system the built service in Chromium */
import { mkdirSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { Lead } from '../src/leads/lead.entity.js';
import { OperatorClients } from '../src/oauth/operator-clients.service.js';
import { CHROMIUM, CHROMIUM_FLAGS as FLAGS, HAVE_CHROMIUM } from './support/chromium.js';
import { CaptchaStub, HCAPTCHA_TEST, TURNSTILE_TEST } from './support/captcha-stub.js';
import { expectContract } from './support/contract.js';
import { freePort } from './support/server-process.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';
import { SITE_PAGES } from './support/site-pages.js';
import { describeIf } from './support/skips.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'browser');

/** A customer's page on another origin: the two pasted lines, nothing else from the service. */
function customerPage(apiBase: string, extra = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ACME · contact</title><script src="${apiBase}/forms/leads.js" defer></script></head>
<body><h1>ACME contact</h1>
<form data-leads data-origem="customer-site" data-success="Obrigado! Recebemos seu contato."${extra}>
<label for="nome">Name</label> <input id="nome" name="nome">
<label for="email">E-mail</label> <input id="email" name="email" type="email">
<label for="empresa">Company</label> <input id="empresa" name="empresa">
<label for="mensagem">Message</label> <textarea id="mensagem" name="mensagem"></textarea>
<button type="submit">Send</button>
</form></body></html>`;
}

/**
 * A Brazilian customer's page: Portuguese labels, one of them with a required-field star, one wrapping its input.
 * `formAttributes` go on the form; `inside` goes before its button.
 */
function portuguesePage(apiBase: string, formAttributes = '', inside = ''): string {
  return `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>  ACME · contato  </title><script src="${apiBase}/forms/leads.js" defer></script></head>
<body><h1>Fale com a ACME</h1>
<form data-leads data-origem="customer-site"${formAttributes}>
<label for="nome">Nome <abbr title="obrigatório">*</abbr></label> <input id="nome" name="nome">
<label for="email">E-mail</label> <input id="email" name="email" type="email">
<label>Telefone <input name="telefone" type="tel"></label>
${inside}
<button type="submit">Enviar</button>
</form></body></html>`;
}

const CONSENT_LABEL = 'Aceito receber comunicações da empresa por e-mail e telefone.';
/** Spread over lines and spaces as markup often is: the script sends it collapsed. */
const CONSENT_BOX = `<label>
  <input type="checkbox" name="aceite" data-leads-consent="communications">
  Aceito receber comunicações da   empresa
  por e-mail e telefone.
</label>
<label><input type="checkbox" data-leads-consent="communications"> A second box of the same category: not read.</label>`;

/** Runs with or without Chromium: what the two URLs answer over plain HTTP. */
describe('forms over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the script cacheable and loadable from any origin', async () => {
    const res = expectContract(await t.http.get('/forms/leads.js').set('Origin', 'https://customer.example'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.text).not.toMatch(/document\.cookie|localStorage|sessionStorage/);
    expect(() => new Function(res.text)).not.toThrow();
  });

  it('serves the example page with the two lines to paste, escaped', async () => {
    const res = expectContract(await t.http.get('/forms/example'));
    expect(res.status).toBe(200);
    expect(res.text).toContain('&lt;script src=&quot;http://leads.test/forms/leads.js&quot; defer&gt;&lt;/script&gt;');
    expect(res.text).toContain('&lt;form data-leads');
    expect(res.text).toContain('&lt;input type=&quot;checkbox&quot; data-leads-consent=&quot;communications&quot;&gt;');
    expect(res.text).toContain('Aceito receber comunicações da empresa por e-mail e telefone.');
    // A second live copy in English: the script's messages follow its data-leads-lang.
    expect(res.text).toContain('<form data-leads data-leads-lang="en"');
    expect(res.text).toContain('<script src="/forms/leads.js" defer></script>');
    expect(res.text).toContain('<meta name="viewport"');
  });
});

const describeBrowser = describeIf(['chromium'], HAVE_CHROMIUM);

describeBrowser(HAVE_CHROMIUM ? `browser (Chromium at ${CHROMIUM})` : `browser (SKIPPED: ${CHROMIUM} not found)`, () => {
  let t: TestApp;
  let limited: TestApp;
  let appBase: string;
  let limitedBase: string;
  let customer: Server;
  let customerBase: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let leadPosts: number;

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  /** Swagger UI's full page is tens of thousands of pixels tall: capture the top of one operation, up to its live response. */
  async function shotOf(target: ReturnType<Page['locator']>, name: string): Promise<void> {
    await target.scrollIntoViewIfNeeded();
    const box = (await target.boundingBox())!;
    const live = await target.locator('.live-responses-table').first().boundingBox();
    const height = live ? Math.min(live.y + live.height - box.y, 2200) : Math.min(box.height, 1200);
    await page.screenshot({
      path: join(ARTIFACTS, `${name}.png`),
      fullPage: true,
      clip: { x: box.x, y: box.y + (await page.evaluate<number>('scrollY')), width: box.width, height },
    });
  }
  const status = () => page.locator('[data-leads-status]');

  async function fill(p: Page, values: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(values)) await p.fill(`[name="${name}"]`, value);
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const [port, limitedPort, customerPort] = [await freePort(), await freePort(), await freePort()];
    appBase = `http://127.0.0.1:${port}`;
    limitedBase = `http://127.0.0.1:${limitedPort}`;
    t = await startTestApp({ PUBLIC_BASE_URL: appBase });
    await t.app.listen(port, '127.0.0.1');
    limited = await startTestApp({ PUBLIC_BASE_URL: limitedBase, RATE_LIMIT_ANONYMOUS: '2/60s', RATE_LIMIT_AGENT: '20/60s' });
    await limited.app.listen(limitedPort, '127.0.0.1');
    const pages: Record<string, () => string> = {
      '/limited': () => customerPage(limitedBase),
      '/api-with-slashes': () => customerPage(appBase, ` data-leads-api="${appBase}///"`),
      '/pt': () => portuguesePage(appBase),
      '/pt-en': () => portuguesePage(appBase, ' data-leads-lang="en"'),
      '/consent': () => portuguesePage(appBase, '', CONSENT_BOX),
      '/consent-required': () =>
        portuguesePage(
          appBase,
          '',
          '<label><input type="checkbox" data-leads-consent="data_processing" required> Concordo com o tratamento dos meus dados.</label>',
        ),
      // A title with a bidi override, an emoji and more than 256 code points.
      '/odd': () => portuguesePage(appBase).replace('  ACME · contato  ', `\u202eemoji 😀 ${'x'.repeat(300)}`),
      '/start': () => `<!doctype html><title>Início</title><a href="/consent?utm_source=google&utm_campaign=x&gclid=abc#frag">Contato</a>`,
    };
    customer = createServer((req, res) => {
      const page = pages[new URL(req.url!, 'http://customer').pathname] ?? (() => customerPage(appBase));
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page());
    });
    customer.listen(customerPort, '127.0.0.1');
    customerBase = `http://localhost:${customerPort}`;
    // launch() gives Chromium a new empty --user-data-dir of its own and deletes it on close.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
    customer?.close();
    await t?.close();
    await limited?.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    page = await context.newPage();
    leadPosts = 0;
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/api/v1/lead')) leadPosts += 1;
    });
  });

  afterEach(async () => {
    await context?.close();
  });

  it('(a) a valid fill on another origin shows success and stores one lead', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(customerBase);
    await fill(page, { nome: 'Maria Silva', email: 'maria@example.com', empresa: 'ACME', mensagem: 'Orçamento' });
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success]');
    expect(await status().textContent()).toBe('Obrigado! Recebemos seu contato.');
    await shot('a-valid-success');
    expect(await countLeads(t.dataSource)).toBe(before + 1);
    const [row] = await t.dataSource.query('SELECT * FROM leads ORDER BY received_at DESC LIMIT 1');
    expect(row).toMatchObject({ email: 'maria@example.com', origem: 'customer-site' });
  });

  it('(b) an invalid e-mail shows the message beside the e-mail field and stores nothing', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(customerBase);
    await fill(page, { nome: 'Maria Silva', email: 'not-an-address' });
    await page.click('button[type=submit]');
    const email = page.locator('#email');
    await page.waitForSelector('#email[aria-invalid=true]');
    const describedBy = (await email.getAttribute('aria-describedby'))!;
    const message = page.locator(`#${describedBy.split(' ')[0]}`);
    // The page is in English: the message is built from the field's label, not taken from the API's detail.
    expect(await message.textContent()).toBe('E-mail does not look like a valid address, such as name@company.com.');
    // Beside the field: the error element follows the input directly.
    expect(await email.evaluate((el) => el.nextElementSibling?.id)).toBe(describedBy.split(' ')[0]);
    expect(await page.locator('#nome').getAttribute('aria-invalid')).toBeNull();
    expect(await status().getAttribute('aria-live')).toBe('polite');
    expect(await page.locator('button[type=submit]').isEnabled()).toBe(true);
    await shot('b-invalid-email');
    expect(await countLeads(t.dataSource)).toBe(before);
  });

  it('(c) a double click and a fast double submit each store exactly one lead', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(customerBase);
    await fill(page, { nome: 'Dupla', email: 'dupla@example.com' });
    await page.dblclick('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success]');
    await shot('c-double-click');
    expect(await countLeads(t.dataSource)).toBe(before + 1);
    expect(leadPosts).toBe(1);

    await fill(page, { nome: 'Dupla Dois', email: 'dupla2@example.com' });
    // Strings, not functions: the test compiles without the DOM library.
    await page.evaluate("const form = document.querySelector('form[data-leads]'); form.requestSubmit(); form.requestSubmit();");
    await page.waitForFunction(
      "document.querySelector('[data-leads-status]').getAttribute('data-state') === 'success' && !document.querySelector('form[aria-busy]')",
    );
    expect(await countLeads(t.dataSource)).toBe(before + 2);
    expect(leadPosts).toBe(2);
  });

  it('(b2) a name with nothing visible in it shows the message beside the name field and stores nothing', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(customerBase);
    await fill(page, { nome: '\u200b\u3164\u2800', email: 'maria@example.com' });
    await page.click('button[type=submit]');
    await page.waitForSelector('#nome[aria-invalid=true]');
    const describedBy = (await page.locator('#nome').getAttribute('aria-describedby'))!;
    expect(await page.locator(`#${describedBy.split(' ')[0]}`).textContent()).toBe('Name cannot be blank.');
    expect(await countLeads(t.dataSource)).toBe(before);
  });

  it('(b3) data-leads-api with trailing slashes posts to that origin once', async () => {
    const before = await countLeads(t.dataSource);
    const posted: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posted.push(r.url());
    });
    await page.goto(`${customerBase}/api-with-slashes`);
    await fill(page, { nome: 'Barra Final', email: 'barra@example.com' });
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success]');
    expect(posted).toEqual([`${appBase}/api/v1/lead`]);
    expect(await countLeads(t.dataSource)).toBe(before + 1);
  });

  /** The text of the message a field points at with aria-describedby. */
  async function messageOf(selector: string): Promise<string | null> {
    const describedBy = (await page.locator(selector).getAttribute('aria-describedby'))!;
    return page.locator(`#${describedBy.split(' ')[0]}`).textContent();
  }

  /**
   * Until the service takes the consent and context members, tests of them check what the form sends and answer its
   * posts with a stand-in 201 (a page route runs before the context's, so nothing is taken out of the body first).
   */
  async function standInForLeadPosts(): Promise<void> {
    await page.route(`${appBase}/api/v1/lead`, (route) =>
      route.fulfill({
        status: 201,
        headers: { 'Access-Control-Allow-Origin': '*' },
        contentType: 'application/json',
        body: JSON.stringify({ id: '00000000-0000-4000-8000-000000000000' }),
      }),
    );
  }

  it('(i) a Portuguese page shows Portuguese messages that name the fields by their labels', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(`${customerBase}/pt`);
    await fill(page, { email: 'not-an-address', telefone: '1234' });
    await page.click('button[type=submit]');
    await page.waitForSelector('#email[aria-invalid=true]');
    expect(await messageOf('#nome')).toBe('Informe Nome.');
    expect(await messageOf('#email')).toBe('E-mail não parece um endereço válido, como nome@empresa.com.br.');
    // A label that wraps its input: the message goes inside it and is not read back as part of the label.
    expect(await messageOf('[name=telefone]')).toBe('Telefone precisa de pelo menos 8 dígitos.');
    expect(await status().textContent()).toBe('Corrija os campos destacados.');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=error]');
    await page.waitForSelector('[name=telefone][aria-invalid=true]');
    expect(await messageOf('[name=telefone]')).toBe('Telefone precisa de pelo menos 8 dígitos.');
    await shot('i-portuguese-messages');
    expect(await countLeads(t.dataSource)).toBe(before);
  });

  it('(ii) data-leads-lang="en" on the same Portuguese page shows English messages', async () => {
    await page.goto(`${customerBase}/pt-en`);
    await fill(page, { email: 'not-an-address', telefone: '1234' });
    await page.click('button[type=submit]');
    await page.waitForSelector('#email[aria-invalid=true]');
    expect(await messageOf('#nome')).toBe('Nome is required.');
    expect(await messageOf('#email')).toBe('E-mail does not look like a valid address, such as name@company.com.');
    expect(await messageOf('[name=telefone]')).toBe('Telefone needs at least 8 digits.');
    expect(await status().textContent()).toBe('Please correct the highlighted fields.');
    await shot('ii-english-messages');
  });

  it('(iii) a consent checkbox and the page context go with the lead: granted when checked, declined when not', async () => {
    // Arrive from another page of the site with a query, so that the referrer has one to drop.
    await page.goto(`${customerBase}/start?from=home`);
    await page.click('a');
    await page.waitForSelector('form[data-leads-ready]');
    expect(page.url()).toBe(`${customerBase}/consent?utm_source=google&utm_campaign=x&gclid=abc#frag`);

    async function submitted(): Promise<Record<string, any>> {
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${appBase}/api/v1/lead`),
        page.click('button[type=submit]'),
      ]);
      await page.waitForSelector('[data-leads-status][data-state=success]');
      return request.postDataJSON();
    }
    const context = {
      page_url: `${customerBase}/consent`,
      page_title: 'ACME · contato',
      referrer: `${customerBase}/start`,
      utm_source: 'google',
      utm_campaign: 'x',
      gclid: 'abc',
    };

    await fill(page, { nome: 'Maria Silva', email: 'maria.consent@example.com' });
    await page.check('[name=aceite]');
    const granted = await submitted();
    // The checkbox is no lead field of its own (its name "aceite" is not sent).
    expect(granted).toEqual({
      nome: 'Maria Silva',
      email: 'maria.consent@example.com',
      origem: 'customer-site',
      legal_bases: [{ category: 'communications', type: 'consent', status: 'granted' }],
      consent_text: CONSENT_LABEL,
      context,
    });
    await shot('iii-consent-granted');
    // Stored by the real service: the evidence recorded, the wording kept once, the URLs without query and fragment.
    const stored = await t.dataSource.getRepository(Lead).findOneByOrFail({ email: 'maria.consent@example.com' });
    expect(stored.legalBases).toEqual([expect.objectContaining({ category: 'communications', type: 'consent', status: 'granted', channel: 'form' })]);
    expect(stored.context).toEqual(context);
    expect(await t.dataSource.query('SELECT text FROM consent_texts')).toEqual([{ text: CONSENT_LABEL }]);

    // After a success the form is reset: the box is unchecked again.
    await fill(page, { nome: 'João Souza', email: 'joao@example.com' });
    expect(await page.isChecked('[name=aceite]')).toBe(false);
    const declined = await submitted();
    expect(declined.legal_bases).toEqual([{ category: 'communications', type: 'consent', status: 'declined' }]);
    expect(declined.consent_text).toBe(CONSENT_LABEL);
    expect(declined.context).toEqual(context);
  });

  it('(iv) a required consent checkbox left unchecked stops the form with a message in the page language', async () => {
    await standInForLeadPosts();
    await page.goto(`${customerBase}/consent-required`);
    await fill(page, { nome: 'Maria Silva', email: 'maria@example.com' });
    await page.click('button[type=submit]');
    const box = '[data-leads-consent=data_processing]';
    await page.waitForSelector(`${box}[aria-invalid=true]`);
    expect(await messageOf(box)).toBe('Marque esta caixa se deseja continuar.');
    expect(await status().textContent()).toBe('Corrija os campos destacados.');
    expect(await page.evaluate<string | undefined>('document.activeElement?.getAttribute("data-leads-consent")')).toBe('data_processing');
    expect(leadPosts).toBe(0);
    await shot('iv-consent-required');

    await page.check(box);
    expect(await page.locator(box).getAttribute('aria-invalid')).toBeNull();
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${appBase}/api/v1/lead`),
      page.click('button[type=submit]'),
    ]);
    expect(request.postDataJSON()).toMatchObject({
      legal_bases: [{ category: 'data_processing', type: 'consent', status: 'granted' }],
      consent_text: 'Concordo com o tratamento dos meus dados.',
    });
    await page.waitForSelector('[data-leads-status][data-state=success]');
  });

  it('(v) errors of the consent and context members, and problems without fields, show in the status line in the page language', async () => {
    const answers = [
      {
        status: 422,
        body: {
          code: 'validation_failed',
          detail: 'The lead has invalid fields.',
          errors: [
            { pointer: '/context/page_url', code: 'invalid_url', detail: 'context.page_url must be an absolute URL.' },
            { pointer: '/legal_bases/0/status', code: 'invalid_value', detail: 'status must be granted or declined.' },
            { pointer: '/context/utm_source', code: 'some_new_code', detail: 'utm_source is odd.' },
          ],
        },
      },
      { status: 503, body: { code: 'service_unavailable', detail: 'The database is unavailable.' } },
    ];
    await page.route(`${appBase}/api/v1/lead`, (route) => {
      const answer = answers.shift()!;
      return route.fulfill({
        status: answer.status,
        headers: { 'Access-Control-Allow-Origin': '*' },
        contentType: 'application/problem+json',
        body: JSON.stringify(answer.body),
      });
    });
    await page.goto(`${customerBase}/consent`);
    await fill(page, { nome: 'Maria Silva', email: 'maria@example.com' });
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=error]');
    expect(await status().textContent()).toBe(
      'Não foi possível enviar o formulário. Endereço da página não é um endereço web válido. Consentimento tem um valor não permitido. ' +
        'Contexto da página tem um valor inválido.',
    );
    expect(await page.locator('[aria-invalid=true]').count()).toBe(0);
    await shot('v-member-errors');

    await page.click('button[type=submit]');
    await page.waitForFunction("document.querySelector('[data-leads-status]').textContent.startsWith('O serviço')");
    expect(await status().textContent()).toBe('O serviço está indisponível no momento. Tente de novo em alguns minutos.');
  });

  it('(vi) context values are cleaned: controls and bidi controls out, at most 256 code points, empty ones left out', async () => {
    await standInForLeadPosts();
    const query = `utm_source=${'a'.repeat(300)}&utm_medium=%0Aa%01b&utm_term=%20%20&fbclid=`;
    await page.goto(`${customerBase}/odd?${query}`);
    await fill(page, { nome: 'Maria Silva', email: 'maria@example.com' });
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${appBase}/api/v1/lead`),
      page.click('button[type=submit]'),
    ]);
    const { context } = request.postDataJSON();
    // No referrer (the page was opened directly), no empty parameters.
    expect(Object.keys(context)).toEqual(['page_url', 'page_title', 'utm_source', 'utm_medium']);
    expect(context.page_url).toBe(`${customerBase}/odd`);
    expect([...context.page_title]).toHaveLength(256);
    expect(context.page_title).toBe(`emoji 😀 ${'x'.repeat(248)}`);
    expect(context.utm_source).toBe('a'.repeat(256));
    expect(context.utm_medium).toBe('ab');
  });

  it('(d) a filled honeypot shows the same success, and its value goes with the lead in Form-Trap (screening judges it)', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(customerBase);
    const trap = page.locator('input[name=website]');
    expect(await trap.getAttribute('tabindex')).toBe('-1');
    expect(await trap.getAttribute('autocomplete')).toBe('off');
    expect(await trap.isVisible()).toBe(true); // present for bots, but off-screen:
    expect((await trap.boundingBox())!.x).toBeLessThan(0);
    await fill(page, { nome: 'Bot', email: 'bot@example.com', website: 'http://spam.example/ção' });
    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/v1/lead'));
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success]');
    await shot('d-honeypot');
    // Header values are ASCII: what is not becomes "?".
    expect((await posted).headers()['form-trap']).toBe('http://spam.example/??o');
    expect(leadPosts).toBe(1);
    expect(await countLeads(t.dataSource)).toBe(before + 1);
  });

  it('(e) a 429 tells the user how long to wait', async () => {
    await page.goto(`${customerBase}/limited`);
    for (let i = 1; i <= 2; i++) {
      await fill(page, { nome: `Quota ${i}`, email: `quota${i}@example.com` });
      await page.click('button[type=submit]');
      await page.waitForSelector('[data-leads-status][data-state=success]');
    }
    await fill(page, { nome: 'Quota 3', email: 'quota3@example.com' });
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=wait]');
    const text = (await status().textContent())!;
    expect(text).toMatch(/wait \d+ seconds/);
    expect(await page.locator('button[type=submit]').isDisabled()).toBe(true);
    await shot('e-rate-limited');
    expect(await countLeads(limited.dataSource)).toBe(2);
  });

  // One page of Swagger UI through these steps in order, each its own test, so that a failure names its step.
  describe('(f) Swagger UI lists every operation; Try it out works for sandbox, lead, registration, token and Authorize', () => {
    let docsContext: BrowserContext;
    let docs: Page;
    const errors: string[] = [];
    const offsite: string[] = [];
    let assertion: string;
    let token: string;

    beforeAll(async () => {
      docsContext = await browser.newContext({ viewport: { width: 1000, height: 900 } });
      docs = await docsContext.newPage();
      docs.on('pageerror', (e) => errors.push(e.message));
      docs.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      docs.on('request', (r) => !r.url().startsWith(appBase) && !r.url().startsWith('data:') && offsite.push(r.url()));
    });
    afterAll(() => docsContext?.close());
    // The steps share the one page (shot and shotOf capture `page`).
    beforeEach(() => {
      page = docs;
    });

    const operation = (operationId: string) => page.locator(`.opblock[id^="operations-"][id$="-${operationId}"]`).first();
    async function tryOut(operationId: string, before?: (op: ReturnType<Page['locator']>) => Promise<void>): Promise<string> {
      const op = operation(operationId);
      if (!(await op.locator('.try-out').isVisible())) await op.locator('.opblock-summary').first().click();
      await op.locator('button.try-out__btn').click();
      if (before) await before(op);
      await op.locator('button.execute').click();
      const cell = op.locator('.live-responses-table tr.response .response-col_status').first();
      await cell.waitFor();
      return (await cell.textContent())!.trim();
    }

    it('(f1) lists every operation of the contract and every event it sends', async () => {
      const contract = (await (await fetch(`${appBase}/docs/openapi-leads.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        webhooks: Record<string, Record<string, unknown>>;
      };
      const methods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
      // The events the service sends (OpenAPI `webhooks`) are shown as operations too, under their names.
      const expected = [...Object.entries(contract.paths), ...Object.entries(contract.webhooks)].flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => methods.includes(m))
          .map((m) => `${m.toUpperCase()} ${path}`),
      );
      await page.goto(`${appBase}/docs`);
      await page.waitForSelector('.opblock');
      const shown = await page.$$eval('.opblock', (blocks) =>
        blocks.map(
          (b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      );
      expect(new Set(shown)).toEqual(new Set(expected));
      await page.screenshot({ path: join(ARTIFACTS, 'f-swagger-operations.png') });
    });

    it('(f2) Try it out on the sandbox answers 200', async () => {
      expect(await tryOut('validateLead')).toMatch(/^200/);
      await shotOf(operation('validateLead'), 'f-swagger-sandbox-200');
    });

    it('(f3) Try it out on the lead route answers 201', async () => {
      expect(await tryOut('createLead')).toMatch(/^201/);
      await shotOf(operation('createLead'), 'f-swagger-lead-201');
    });

    it('(f4) Try it out registers an agent identity (200) with an identity assertion', async () => {
      expect(await tryOut('registerAgentIdentity')).toMatch(/^200/);
      const registration = JSON.parse((await operation('registerAgentIdentity').locator('.live-responses-table .microlight').first().textContent())!);
      assertion = registration.identity_assertion as string;
      expect(assertion).toBeTruthy();
    });

    it('(f5) Try it out exchanges that assertion for an access token (200)', async () => {
      expect(
        await tryOut('issueToken', async (op) => {
          await op.locator('tr[data-param-name=assertion] input, input[placeholder=assertion]').first().fill(assertion);
        }),
      ).toMatch(/^200/);
      await shotOf(operation('issueToken'), 'f-swagger-token-200');
      token = JSON.parse((await operation('issueToken').locator('.live-responses-table .microlight').first().textContent())!).access_token as string;
      expect(token).toBeTruthy();
    });

    it('(f6) Authorize with that token: the next Try it out sends it as a Bearer token', async () => {
      await page.locator('button.authorize').first().click();
      await page.locator('.auth-container input[type=text], .auth-container input').first().fill(token);
      await page.locator('.auth-container button.authorize').first().click();
      await page.locator('button.btn-done, .modal-ux button.close-modal').first().click();
      await operation('validateLead').locator('button.execute').click();
      await page.waitForTimeout(300);
      const curl = await operation('validateLead').locator('.curl-command').first().textContent();
      expect(curl).toContain(`Bearer ${token}`);
      await shotOf(operation('validateLead'), 'f-swagger-authorized-sandbox');
    });

    it('(f7) all of it with no request to another origin and no error in the page', () => {
      expect(offsite).toEqual([]);
      expect(errors).toEqual([]);
    });
  });

  it('(h) Swagger UI Authorize: the client-credentials flow gets an operator token, and Try it out lists the leads', async () => {
    const client = await t.app.get(OperatorClients).create('Swagger UI e2e', 'leads:read');
    const lead = await fetch(`${appBase}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ nome: 'Try It Out', email: 'try-it-out@example.com' }),
    });
    expect(lead.status).toBe(201);
    // And one held for review (a forged form token), as every lead of a form filled by a script in under 3 s is: with the
    // default screening=accepted, Try it out showed a team whose leads were all held an empty list (issue 35).
    const held = await fetch(`${appBase}/api/v1/lead`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Form-Token': 'forged' },
      body: JSON.stringify({ nome: 'Held Lead', email: 'held-lead@example.com' }),
    });
    expect(held.status).toBe(201);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let tokenRequest: string | null = null;
    page.on('request', (r) => r.url() === `${appBase}/oauth2/token` && (tokenRequest = r.postData()));
    await page.goto(`${appBase}/docs`);
    await page.waitForSelector('.opblock');
    await page.locator('button.authorize').first().click();
    const operator = page.locator('.auth-container').filter({ hasText: 'operatorAuth' });
    await operator.locator('input[data-name=clientId]').fill(client.client_id);
    await operator.locator('input[data-name=clientSecret]').fill(client.client_secret);
    await operator.locator('label[for^="leads:read-"]').click();
    await operator.locator('button.authorize').click();
    await operator.locator('button.authorize', { hasText: 'Logout' }).or(operator.getByText('Authorized')).first().waitFor();
    expect(tokenRequest).toContain('grant_type=client_credentials');
    expect(tokenRequest).toMatch(/scope=leads(%3A|:)read/);
    await page.locator('button.btn-done, .modal-ux button.close-modal').first().click();

    const list = page.locator('.opblock[id^="operations-"][id$="-listLeads"]').first();
    await list.locator('.opblock-summary').first().click();
    await list.locator('button.try-out__btn').click();
    await list.locator('button.execute').click();
    const cell = list.locator('.live-responses-table tr.response .response-col_status').first();
    await cell.waitFor();
    expect((await cell.textContent())!.trim()).toMatch(/^200/);
    const curl = (await list.locator('.curl-command').first().textContent())!;
    expect(curl).toMatch(/Authorization: Bearer [\w-]+\.[\w-]+\.[\w-]+/);
    // No filter is filled in for the reader (issue 31): the page lists the stored leads, not data: [].
    expect(curl).not.toMatch(/[?&](since|until|origem|email|channel|q)=/);
    expect(curl).toContain('screening=all');
    const body = (await list.locator('.live-responses-table .microlight').first().textContent())!;
    expect(body).toContain('try-it-out@example.com');
    expect(body).toContain('held-lead@example.com');
    await shotOf(list, 'h-swagger-operator-leads-200');
    expect(errors).toEqual([]);
  });

  it('(g) the example page tries the form through the sandbox: the normalised lead is shown, nothing is stored', async () => {
    const before = await countLeads(t.dataSource);
    await page.goto(`${appBase}/forms/example`);
    expect(await page.locator('#snippet-script').textContent()).toBe(`<script src="${appBase}/forms/leads.js" defer></script>`);
    expect(await page.locator('#snippet-form').textContent()).toContain('<form data-leads');
    // The snippet to paste sends real leads; the page's own copy only tries them.
    expect(await page.locator('#snippet-form').textContent()).not.toContain('data-leads-sandbox');
    const posted: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posted.push(new URL(request.url()).pathname);
    });
    await fill(page, { nome: '  Exemplo  ', email: 'exemplo@EXAMPLE.com', mensagem: 'Do exemplo' });
    await page.click('form[data-leads] button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success] [data-leads-preview]');
    await shot('g-example-success');
    const preview = JSON.parse((await page.locator('[data-leads-preview]').textContent()) ?? '');
    expect(preview).toMatchObject({ nome: 'Exemplo', email: 'exemplo@example.com', mensagem: 'Do exemplo', origem: 'forms-example' });
    expect(posted).toEqual(['/api/v1/sandbox']);
    expect(await countLeads(t.dataSource)).toBe(before);
  });

  it('(j) every page of the site: its navigation answers 200, nothing scrolls sideways at 375 px, no code is cut off at 1280 px', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const linked = new Set<string>();
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of SITE_PAGES) {
        const res = await page.goto(`${appBase}${path}`);
        expect([path, res?.status()]).toEqual([path, 200]);
        // Swagger UI renders after load; its full page is thousands of pixels tall: the first screen is enough to see.
        if (path === '/docs') await page.waitForSelector('.opblock');
        const name = path.replace(/^\/|\/$/g, '').replace(/[^\w]+/g, '-');
        await page.screenshot({ path: join(ARTIFACTS, `site-${width}-${name}.png`), fullPage: path !== '/docs' });
        for (const href of await page.$$eval('.site-nav a', (links) => links.map((link) => link.getAttribute('href')!))) linked.add(href);
        expect([path, await page.locator('.site-nav').count()]).toEqual([path, 1]);
        expect([path, await page.evaluate<number>('document.documentElement.scrollWidth')]).toEqual([path, width]);
        // A code block either shows every line whole, or scrolls (Swagger UI's own blocks do).
        const cut = await page.evaluate<string[]>(
          `[...document.querySelectorAll('pre')].filter((pre) => pre.scrollWidth > pre.clientWidth && !/auto|scroll/.test(getComputedStyle(pre).overflowX)).map((pre) => pre.textContent.slice(0, 60))`,
        );
        expect([path, cut]).toEqual([path, []]);
        if (path !== '/docs') {
          const wide = await page.evaluate<string[]>(
            `[...document.querySelectorAll('main pre')].filter((pre) => pre.scrollWidth > pre.clientWidth).map((pre) => pre.textContent.slice(0, 60))`,
          );
          expect([path, width, wide]).toEqual([path, width, []]);
        }
      }
    }
    expect(linked.size).toBeGreaterThanOrEqual(13);
    for (const href of linked) {
      const res = await context.request.get(`${appBase}${href}`);
      expect([href, res.status()]).toEqual([href, 200]);
    }
    const icon = await context.request.get(`${appBase}/favicon.ico`);
    expect([icon.status(), icon.headers()['content-type']]).toEqual([200, 'image/x-icon']);
    expect(errors).toEqual([]);
  }, 180_000);

  it('(h) the example form fits a 375 px screen without horizontal scrolling', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${appBase}/forms/example`);
    await fill(page, { email: 'x' });
    await page.click('form[data-leads] button[type=submit]');
    await page.waitForSelector('#email[aria-invalid=true]');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await shot('h-narrow-example');
    await page.goto(`${appBase}/docs/quickstart`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  });
});

/**
 * The snippet exactly as /forms/example shows it, pasted into pages with no CSS of their own: it must look right by the
 * script's default style alone, which the host page's CSS overrides and `data-leads-style="none"` turns off.
 * Then the /cli/ page on a phone. Evaluated as strings: the test compiles without the DOM library.
 */
describeBrowser('the pasted form on a page without CSS, and /cli/ on a phone', () => {
  let t: TestApp;
  let appBase: string;
  let host: Server;
  let hostBase: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let snippet: { script: string; form: string };
  const hostPages: Record<string, { html: () => string; headers?: () => Record<string, string> }> = {};

  const ZERO_SPECIFICITY_HOST_CSS = '*{margin:0} :where(label){display:inline} :where(input){border:3px solid rgb(0, 128, 0)}';
  /** A whole page around pasted markup: nothing but the snippet and what `head` adds. */
  const pageWith = (lang: string, body: string, head = '') =>
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Contato</title>${head}</head><body>
${body}
</body></html>`;
  /** The snippet's form with its ids (and the labels' for) prefixed, so that copies can share a page. */
  const renamed = (form: string, prefix: string) => form.replace(/ (id|for)="/g, ` $1="${prefix}`);
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const [port, hostPort] = [await freePort(), await freePort()];
    appBase = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: appBase });
    await t.app.listen(port, '127.0.0.1');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    const reader = await browser.newPage();
    await reader.goto(`${appBase}/forms/example`);
    snippet = { script: (await reader.locator('#snippet-script').textContent())!, form: (await reader.locator('#snippet-form').textContent())! };
    await reader.close();
    const english = () => snippet.form.replace('data-leads-lang="pt-BR"', 'data-leads-lang="en"');
    const off = (form: string) => form.replace('<form data-leads', '<form data-leads data-leads-style="none"');
    Object.assign(hostPages, {
      '/pasted': { html: () => pageWith('pt-BR', `${snippet.script}\n${snippet.form}`) },
      '/pasted-en': { html: () => pageWith('en', `${snippet.script}\n${english()}`) },
      '/host-css': {
        html: () => pageWith('pt-BR', `${snippet.script}\n${snippet.form}`, '<style>form label{color:rgb(1, 2, 3)} input{padding:3px}</style>'),
      },
      // Rules of no specificity at all, as resets and `:where()` styles of design systems are; one of them in a layer.
      '/host-zero': {
        html: () => pageWith('pt-BR', `${snippet.script}\n${snippet.form}`, `<style>${ZERO_SPECIFICITY_HOST_CSS}</style>`),
      },
      '/host-layered': {
        html: () => pageWith('pt-BR', `${snippet.script}\n${snippet.form}`, `<style>@layer site { ${ZERO_SPECIFICITY_HOST_CSS} }</style>`),
      },
      '/off': { html: () => pageWith('pt-BR', `${snippet.script}\n${off(snippet.form)}`) },
      // The script pasted twice; a form with the default style off, one with it, and the same markup in a plain form.
      '/mixed': {
        html: () =>
          pageWith(
            'pt-BR',
            `${snippet.script}\n${snippet.script}\n${off(renamed(snippet.form, 'off-'))}\n${renamed(snippet.form, 'on-')}\n` +
              renamed(snippet.form, 'plain-').replace('<form data-leads', '<form data-plain'),
          ),
      },
      '/strict-csp': {
        html: () => pageWith('pt-BR', `${snippet.script}\n${snippet.form}`),
        headers: () => ({ 'Content-Security-Policy': `default-src 'none'; script-src ${appBase}; connect-src ${appBase}; style-src 'self'` }),
      },
    });
    host = createServer((req, res) => {
      const found = hostPages[new URL(req.url!, 'http://host').pathname];
      if (!found) return res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...found.headers?.() }).end(found.html());
    });
    host.listen(hostPort, '127.0.0.1');
    hostBase = `http://localhost:${hostPort}`;
  });

  afterAll(async () => {
    await browser?.close();
    host?.close();
    await t?.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });

  afterEach(async () => {
    await context?.close();
  });

  interface Box {
    top: number;
    bottom: number;
    left: number;
    right: number;
  }
  interface FieldLayout {
    id: string;
    label: Box;
    field: Box;
    /** The shown error after the field, if any. */
    error: Box | null;
    /** The next label after the field (and its error), if any. */
    next: Box | null;
    invalid: boolean;
    /** Computed, and with the focus elsewhere. */
    borderColor: string;
  }
  /** Every `<label for>` of the first form, its field, the field's error and the next label, as laid out now. */
  const layout = (formSelector = 'form[data-leads]') =>
    page.evaluate<{ form: Box; width: number; fields: FieldLayout[] }>(`(() => {
      document.activeElement && document.activeElement.blur();
      const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
      const form = document.querySelector(${JSON.stringify(formSelector)});
      const labels = [...form.querySelectorAll('label')].filter((label) => label.offsetParent && label.getBoundingClientRect().left >= 0);
      const formStyle = getComputedStyle(form);
      const inner = box(form);
      inner.left += parseFloat(formStyle.paddingLeft); inner.right -= parseFloat(formStyle.paddingRight);
      return {
        form: inner,
        width: document.documentElement.scrollWidth,
        fields: labels.filter((label) => label.htmlFor).map((label) => {
          const field = document.getElementById(label.htmlFor);
          const after = field.nextElementSibling;
          const error = after && after.matches('[data-leads-error]') && !after.hidden ? after : null;
          const next = labels[labels.indexOf(label) + 1];
          return {
            id: field.id, label: box(label), field: box(field), error: error && box(error), next: next ? box(next) : null,
            invalid: field.getAttribute('aria-invalid') === 'true', borderColor: getComputedStyle(field).borderTopColor,
          };
        }),
      };
    })()`);

  it('at 1280 and 375 px, in Portuguese and English: labels above full-width fields, errors under their fields, invalid ones coloured without focus', async () => {
    const before = await countLeads(t.dataSource);
    for (const [path, lang, fix] of [
      ['/pasted', 'pt', 'Corrija os campos destacados.'],
      ['/pasted-en', 'en', 'Please correct the highlighted fields.'],
    ] as const) {
      for (const width of [1280, 375]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${hostBase}${path}`);
        await page.waitForSelector('form[data-leads-ready]');
        const fresh = await layout();
        const form = fresh.form;
        expect(fresh.fields.map((f) => f.id)).toEqual(['nome', 'email', 'telefone', 'empresa', 'mensagem']);
        for (const f of fresh.fields) {
          // Above its field, starting where the field starts; the field fills the form's width.
          expect([f.id, f.label.bottom <= f.field.top + 0.5]).toEqual([f.id, true]);
          expect([f.id, Math.abs(f.label.left - f.field.left) <= 1]).toEqual([f.id, true]);
          expect([f.id, Math.abs(f.field.right - form.right) <= 1 && Math.abs(f.field.left - form.left) <= 1]).toEqual([f.id, true]);
          if (f.next) expect([f.id, f.field.bottom <= f.next.top]).toEqual([f.id, true]);
        }
        expect(fresh.width).toBe(width);
        if (lang === 'pt') await shot(`pasted-${width}-${lang}`);

        // A bad submit: an empty name, an address without @, four digits of phone.
        await page.fill('#email', 'maria.example.com');
        await page.fill('#telefone', '1234');
        await page.click('button[type=submit]');
        await page.waitForSelector('#telefone[aria-invalid=true]');
        const failed = await layout();
        const invalid = failed.fields.filter((f) => f.invalid).map((f) => f.id);
        expect(invalid).toEqual(['nome', 'email', 'telefone']);
        const valid = failed.fields.find((f) => f.id === 'empresa')!;
        for (const f of failed.fields.filter((f) => f.invalid)) {
          // Under its field, inside the screen, clear of the next label; the field's border is not a valid field's.
          expect([f.id, f.error !== null]).toEqual([f.id, true]);
          expect([f.id, f.error!.top >= f.field.bottom - 0.5, f.error!.left >= f.field.left - 1, f.error!.right <= width]).toEqual([f.id, true, true, true]);
          expect([f.id, f.error!.bottom <= f.next!.top]).toEqual([f.id, true]);
          expect([f.id, f.borderColor]).not.toEqual([f.id, valid.borderColor]);
        }
        // The form's message is in the colour of the highlighted fields, which no label has.
        const colours = await page.evaluate<{ status: string; text: string; error: string; label: string }>(`(() => {
          const status = document.querySelector('[data-leads-status]');
          return { status: getComputedStyle(status).color, text: status.textContent, error: getComputedStyle(document.querySelector('[data-leads-error]')).color,
            label: getComputedStyle(document.querySelector('label')).color };
        })()`);
        expect(colours.text).toBe(fix);
        expect(colours.status).toBe(failed.fields[0].borderColor);
        expect(colours.error).toBe(failed.fields[0].borderColor);
        expect(colours.label).not.toBe(colours.status);
        expect(failed.width).toBe(width);
        await shot(`pasted-${width}-${lang}-errors`);
      }
    }
    expect(await countLeads(t.dataSource)).toBe(before);
  });

  it("the host page's own CSS wins without !important, and the style holds under a CSP without 'unsafe-inline'", async () => {
    await page.goto(`${hostBase}/host-css`);
    await page.waitForSelector('form[data-leads-ready]');
    const styled = await page.evaluate<{ color: string; padding: string }>(
      `({ color: getComputedStyle(document.querySelector('label')).color, padding: getComputedStyle(document.querySelector('#nome')).paddingTop })`,
    );
    // An element selector (one point of specificity) beats every rule of the default style.
    expect(styled).toEqual({ color: 'rgb(1, 2, 3)', padding: '3px' });
    for (const f of (await layout()).fields) expect([f.id, f.label.bottom <= f.field.top + 0.5]).toEqual([f.id, true]);

    const refused: string[] = [];
    page.on('console', (m) => /Content Security Policy/i.test(m.text()) && refused.push(m.text()));
    await page.goto(`${hostBase}/strict-csp`);
    await page.waitForSelector('form[data-leads-ready]');
    // A constructed style sheet is not an inline style: `style-src 'self'` lets it apply, and nothing is refused.
    for (const f of (await layout()).fields) expect([f.id, f.label.bottom <= f.field.top + 0.5]).toEqual([f.id, true]);
    await page.click('button[type=submit]');
    await page.waitForSelector('#nome[aria-invalid=true]');
    expect((await layout()).fields[0].borderColor).not.toBe((await layout()).fields[3].borderColor);
    expect(refused).toEqual([]);
  });

  it("the host page's CSS of no specificity (`*`, `:where()`) wins too, as a constructed sheet and as a <style> element", async () => {
    /** Every visible label and text input of the form, as the page computes them (Chromium draws no border on a checkbox). */
    const computed = () =>
      page.evaluate<string[]>(`[...document.querySelectorAll('form[data-leads] label, form[data-leads] input:not([type=checkbox], [type=hidden])')]
        .filter((el) => !el.closest('[aria-hidden=true]')).map((el) => { const s = getComputedStyle(el);
          return el.tagName === 'LABEL' ? ['LABEL', s.display, s.margin].join(' ') : ['INPUT', s.margin, s.borderTopWidth, s.borderTopStyle, s.borderTopColor, s.borderLeftColor].join(' '); })`);
    const expectHostStyle = (found: string[]) => {
      expect(found.filter((line) => line.startsWith('LABEL')).length).toBeGreaterThanOrEqual(3);
      expect(found.filter((line) => line.startsWith('INPUT')).length).toBeGreaterThanOrEqual(3);
      expect(found.filter((line) => !/^(LABEL inline 0px|INPUT 0px 3px solid rgb\(0, 128, 0\) rgb\(0, 128, 0\))$/.test(line))).toEqual([]);
    };
    await page.goto(`${hostBase}/host-zero`);
    await page.waitForSelector('form[data-leads-ready]');
    expect(await page.evaluate<number>('document.adoptedStyleSheets.length')).toBe(1);
    expectHostStyle(await computed());
    await shot('pasted-1280-host-zero');

    // Where the browser has no adoptedStyleSheets the <style> goes first in <head>: the host's rules, unlayered or in
    // a layer of their own (declared after the form's), win there as well.
    await page.addInitScript('delete Document.prototype.adoptedStyleSheets');
    for (const path of ['/host-zero', '/host-layered']) {
      await page.goto(`${hostBase}${path}`);
      await page.waitForSelector('form[data-leads-ready]');
      expect([path, await page.evaluate<number>(`document.querySelectorAll('head > style#leads-form-style').length`)]).toEqual([path, 1]);
      expectHostStyle(await computed());
    }
  });

  it('data-leads-style="none" leaves the form as the page alone would show it, and the style is added once per document', async () => {
    await page.goto(`${hostBase}/off`);
    await page.waitForSelector('form[data-leads-ready]');
    // Nothing added to the page at all.
    expect(await page.evaluate<number>(`document.adoptedStyleSheets.length + document.querySelectorAll('style').length`)).toBe(0);
    const off = await layout();
    expect(off.fields[0].label.bottom > off.fields[0].field.top).toBe(true);
    await shot('pasted-1280-style-none');

    const computed = (selector: string) =>
      page.evaluate<
        string[]
      >(`[...document.querySelectorAll(${JSON.stringify(`${selector} label, ${selector} input, ${selector} textarea, ${selector} button`)})]
        .filter((el) => !el.closest('[aria-hidden=true]')).map((el) => { const s = getComputedStyle(el); return [el.tagName, s.display, s.width, s.padding, s.margin, s.borderTopColor, s.borderTopWidth, s.fontWeight, s.color].join(' '); })`);
    // As a constructed sheet, then as a <style> element where the browser has no adoptedStyleSheets.
    for (const [older, sheets, elements] of [
      [false, 1, 0],
      [true, 0, 1],
    ] as const) {
      if (older) await page.addInitScript('delete Document.prototype.adoptedStyleSheets');
      await page.goto(`${hostBase}/mixed`);
      await page.waitForSelector('form[data-leads-ready] ~ form[data-leads-ready]');
      // Two copies of the script, one style.
      expect(
        await page.evaluate<number[]>(`[(document.adoptedStyleSheets || []).length, document.querySelectorAll('head > style#leads-form-style').length]`),
      ).toEqual([sheets, elements]);
      // The form with the style off computes as the same markup in a plain form; the other one is styled.
      expect(await computed('form[data-leads-style=none]')).toEqual(await computed('form[data-plain]'));
      expect(await computed('form[data-leads]:not([data-leads-style])')).not.toEqual(await computed('form[data-plain]'));
      const on = await layout('form[data-leads]:not([data-leads-style])');
      for (const f of on.fields) expect([older, f.id, f.label.bottom <= f.field.top + 0.5]).toEqual([older, f.id, true]);
    }
  });

  it('/cli/ at 375 px: the SHA-256 wraps inside the screen, whole and visible', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${appBase}/cli/`);
    const sha = await page.evaluate<{ text: string; page: number; boxes: { scroll: number; client: number }[]; lines: Box[] }>(`(() => {
      const code = document.getElementById('sha256');
      const boxes = [code.closest('td'), code.closest('table')].map((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      const lines = [...code.getClientRects()].map((r) => ({ top: r.top, bottom: r.bottom, left: r.left, right: r.right }));
      return { text: code.textContent, page: document.documentElement.scrollWidth, boxes, lines };
    })()`);
    expect(sha.text).toMatch(/^[0-9a-f]{64}$/);
    expect(sha.page).toBe(375);
    // Nothing hidden in a scrolling cell or table, every line of it on the screen.
    for (const box of sha.boxes) expect(box.scroll).toBeLessThanOrEqual(box.client);
    for (const line of sha.lines) expect([line.left >= 0, line.right <= 375]).toEqual([true, true]);
    await page.locator('#sha256').screenshot({ path: join(ARTIFACTS, 'cli-375-sha256.png') });
    await shot('cli-375');
  });
});

/**
 * The form's screening signals (issue 33), as the service receives them from Chromium on a customer's page: the form
 * token taken when the form is shown (Form-Token), the trap field (Form-Trap) and, with a captcha provider, the widget's
 * token (Captcha-Token); and the verdict stored with each lead.
 */
describeBrowser('the form sends its screening signals', () => {
  /** Turnstile's documented test keys: this secret always passes, and the widget's token for a test site key is this one. */
  /** hCaptcha's documented test key pair, and the response its widget gives with that site key. */
  /**
   * The widget stand-in served as CAPTCHA_SCRIPT_URL: the explicit-render API of Turnstile (`window.turnstile`) or
   * hCaptcha (`window.hcaptcha`), which renders a box and calls back with the provider's test token, and gives a new one
   * on reset (counted, so a test can see a spent token replaced). In a form with data-stand-in="interactive" it waits for
   * a click on its box, as hCaptcha waits for the person.
   */
  const standInWidget = (global: 'turnstile' | 'hcaptcha', token: string) => `window.${global} = {
  render: function (el, options) {
    var box = document.createElement('div');
    box.setAttribute('data-stand-in-widget', options.sitekey);
    box.textContent = 'verification (stand-in)';
    el.appendChild(box);
    window.standIn = { renders: 1, resets: 0, options: options };
    var give = function () { options.callback('${token}'); };
    if (el.closest('form').getAttribute('data-stand-in') === 'interactive') box.addEventListener('click', give);
    else setTimeout(give, 50);
    return 'stand-in-widget';
  },
  reset: function (id) {
    if (id !== 'stand-in-widget') throw new Error('unknown widget ' + id);
    window.standIn.resets += 1;
    setTimeout(function () { window.standIn.options.callback('${token}'); }, 50);
  },
};`;

  let plain: TestApp;
  let captcha: TestApp;
  let hcaptcha: TestApp;
  let plainBase: string;
  let captchaBase: string;
  let site: Server;
  let siteBase: string;
  let siteverify: CaptchaStub;
  const verifications = () => siteverify.requests.map((request) => request.form);
  /** The headers of each POST /api/v1/lead, as the service's HTTP server received them. */
  const received: Record<string, string | string[] | undefined>[] = [];
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  /** Records every lead request's headers before the application sees it. */
  function recordLeadHeaders(app: TestApp): void {
    (app.app.getHttpServer() as Server).prependListener('request', (req) => {
      if (req.method === 'POST' && req.url === '/api/v1/lead') received.push({ ...req.headers });
    });
  }

  async function storedLead(app: TestApp, email: string) {
    const rows = (await app.dataSource.query('SELECT screening_verdict, screening_reasons, channel FROM leads WHERE email = ?', [email])) as {
      screening_verdict: string;
      screening_reasons: string;
      channel: string;
    }[];
    expect(rows).toHaveLength(1);
    return { verdict: rows[0].screening_verdict, reasons: JSON.parse(rows[0].screening_reasons) as string[], channel: rows[0].channel };
  }

  /** Opens the page and answers the form token it took when the form was shown, and when it arrived. */
  async function open(url: string): Promise<{ token: string; at: number }> {
    const answer = page.waitForResponse((r) => r.url().endsWith('/forms/token') && r.status() === 200);
    await page.goto(url);
    const res = await answer;
    return { token: ((await res.json()) as { token: string }).token, at: Date.now() };
  }

  /** Fills and sends the form; answers the request headers the service received. */
  async function send(values: Record<string, string>) {
    for (const [name, value] of Object.entries(values)) await page.fill(`[name="${name}"]`, value);
    const count = received.length;
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=success]');
    expect(received).toHaveLength(count + 1);
    return received[count];
  }

  /** Waits until `ms` have passed since `since` (a person reading the form). */
  const waitSince = async (since: number, ms: number) => page.waitForTimeout(Math.max(0, since + ms - Date.now()));

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const [plainPort, captchaPort, hcaptchaPort, sitePort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const hcaptchaBase = `http://127.0.0.1:${hcaptchaPort}`;
    plainBase = `http://127.0.0.1:${plainPort}`;
    captchaBase = `http://127.0.0.1:${captchaPort}`;
    siteBase = `http://localhost:${sitePort}`;
    siteverify = await CaptchaStub.start({ hostname: 'localhost' });
    plain = await startTestApp({ PUBLIC_BASE_URL: plainBase });
    await plain.app.listen(plainPort, '127.0.0.1');
    captcha = await startTestApp({
      PUBLIC_BASE_URL: captchaBase,
      CAPTCHA_PROVIDER: 'turnstile',
      CAPTCHA_SECRET: TURNSTILE_TEST.secretPasses,
      CAPTCHA_SITE_KEY: TURNSTILE_TEST.siteKeyPasses,
      CAPTCHA_VERIFY_URL: siteverify.turnstileVerifyUrl,
      CAPTCHA_SCRIPT_URL: `${siteBase}/widget.js`,
    });
    await captcha.app.listen(captchaPort, '127.0.0.1');
    hcaptcha = await startTestApp({
      PUBLIC_BASE_URL: hcaptchaBase,
      CAPTCHA_PROVIDER: 'hcaptcha',
      CAPTCHA_SECRET: HCAPTCHA_TEST.secret,
      CAPTCHA_SITE_KEY: HCAPTCHA_TEST.siteKey,
      CAPTCHA_VERIFY_URL: siteverify.hcaptchaVerifyUrl,
      CAPTCHA_SCRIPT_URL: `${siteBase}/hcaptcha.js`,
    });
    await hcaptcha.app.listen(hcaptchaPort, '127.0.0.1');
    recordLeadHeaders(plain);
    recordLeadHeaders(captcha);
    recordLeadHeaders(hcaptcha);
    site = createServer((req, res) => {
      const path = new URL(req.url!, 'http://site').pathname;
      const script = (text: string) => void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(text);
      if (path === '/widget.js') return script(standInWidget('turnstile', TURNSTILE_TEST.dummyToken));
      if (path === '/hcaptcha.js') return script(standInWidget('hcaptcha', HCAPTCHA_TEST.response));
      const page =
        path === '/hcaptcha'
          ? customerPage(hcaptchaBase, ' data-stand-in="interactive"')
          : path.startsWith('/captcha')
            ? customerPage(captchaBase, path === '/captcha-interactive' ? ' data-stand-in="interactive"' : '')
            : customerPage(plainBase);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
    });
    site.listen(sitePort, '127.0.0.1');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
    site?.close();
    await siteverify?.close();
    await plain?.close();
    await captcha?.close();
    await hcaptcha?.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    page = await context.newPage();
  });
  afterEach(() => context?.close());

  it('a trap filled by a script: the lead goes with the form token and the trap value, and is stored as spam', async () => {
    const { token, at } = await open(siteBase);
    await page.fill('[name=nome]', 'Robô Preenchedor');
    await page.fill('[name=email]', 'robo@example.com');
    await page.evaluate("document.querySelector('input[name=website]').value = 'https://spam.example/'");
    // Past the 3 s, so that the trap alone speaks.
    await waitSince(at, 3_200);
    const headers = await send({});
    expect(headers['form-token']).toBe(token);
    expect(headers['form-trap']).toBe('https://spam.example/');
    expect(headers['captcha-token']).toBeUndefined();
    expect(await page.locator('[data-leads-status]').textContent()).toBe('Obrigado! Recebemos seu contato.');
    expect(await storedLead(plain, 'robo@example.com')).toEqual({ verdict: 'spam', reasons: ['honeypot'], channel: 'form' });
  });

  it('sent less than 3 s after the form token was issued: the same success, and stored as held (too_fast)', async () => {
    const { token, at } = await open(siteBase);
    const headers = await send({ nome: 'Apressado Silva', email: 'apressado@example.com' });
    // The precondition of the case, not a measurement: the form went well within 3 s of its token.
    expect(Date.now() - at).toBeLessThan(3_000);
    expect(headers['form-token']).toBe(token);
    expect(headers['form-trap']).toBe('');
    expect(await page.locator('[data-leads-status]').textContent()).toBe('Obrigado! Recebemos seu contato.');
    expect(await storedLead(plain, 'apressado@example.com')).toEqual({ verdict: 'held', reasons: ['too_fast'], channel: 'form' });
  });

  it('sent normally (after 3 s): accepted; the spent token is replaced, and the next lead from the page carries the new one', async () => {
    const { token, at } = await open(siteBase);
    await page.fill('[name=nome]', 'Maria Normal');
    await page.fill('[name=email]', 'maria.normal@example.com');
    await waitSince(at, 3_200);
    const next = page.waitForResponse((r) => r.url().endsWith('/forms/token') && r.status() === 200);
    const headers = await send({});
    expect(headers['form-token']).toBe(token);
    expect(headers['form-trap']).toBe('');
    expect(headers['captcha-token']).toBeUndefined();
    await shot2('screening-normal');
    expect(await storedLead(plain, 'maria.normal@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });

    const second = (await (await next).json()) as { token: string };
    expect(second.token).not.toBe(token);
    const secondAt = Date.now();
    await page.fill('[name=nome]', 'Maria Normal');
    await page.fill('[name=email]', 'maria.outra@example.com');
    await waitSince(secondAt, 3_200);
    expect((await send({}))['form-token']).toBe(second.token);
    expect(await storedLead(plain, 'maria.outra@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });
  });

  it('a form token near its two hours is replaced before sending, and the new one is held back until it is 3 s old', async () => {
    await page.clock.install();
    const { token } = await open(siteBase);
    const renewed = page.waitForResponse((r) => r.url().endsWith('/forms/token') && r.status() === 200);
    // The page left open for 1 h 55 min: the script takes a new token ten minutes before the old one's two hours.
    await page.clock.runFor('01:55:00');
    const fresh = ((await (await renewed).json()) as { token: string }).token;
    expect(fresh).not.toBe(token);
    await page.fill('[name=nome]', 'Paciente Souza');
    await page.fill('[name=email]', 'paciente@example.com');
    await page.waitForTimeout(3_200);
    const count = received.length;
    await page.click('button[type=submit]');
    await page.clock.runFor(4_000);
    await page.waitForSelector('[data-leads-status][data-state=success]');
    expect(received).toHaveLength(count + 1);
    expect(received[count]['form-token']).toBe(fresh);
    expect(await storedLead(plain, 'paciente@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });
  });

  it('with a captcha provider: the widget from CAPTCHA_SCRIPT_URL is rendered in the form, its token goes in Captcha-Token, and is verified', async () => {
    const { token, at } = await open(`${siteBase}/captcha`);
    const widget = page.locator(`form[data-leads] [data-leads-captcha] [data-stand-in-widget="${TURNSTILE_TEST.siteKeyPasses}"]`);
    await widget.waitFor();
    // Before the submit button, inside the form.
    expect(await page.evaluate("document.querySelector('[data-leads-captcha]').nextElementSibling.getAttribute('type')")).toBe('submit');
    await page.fill('[name=nome]', 'Humana Verificada');
    await page.fill('[name=email]', 'humana@example.com');
    await waitSince(at, 3_200);
    const headers = await send({});
    await shot2('screening-captcha');
    expect(headers['captcha-token']).toBe(TURNSTILE_TEST.dummyToken);
    expect(headers['form-token']).toBe(token);
    expect(headers['form-trap']).toBe('');
    // The widget's token is spent with the lead: the widget is reset for the next one.
    expect(await page.evaluate('window.standIn.resets')).toBe(1);
    expect(verifications()).toContainEqual(expect.objectContaining({ secret: TURNSTILE_TEST.secretPasses, response: TURNSTILE_TEST.dummyToken }));
    expect(await storedLead(captcha, 'humana@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });
  });

  it('with a captcha the person has not done yet: the form says so, and sends itself once the widget has a token', async () => {
    const { at } = await open(`${siteBase}/captcha-interactive`);
    const widget = page.locator('[data-stand-in-widget]');
    await widget.waitFor();
    await page.fill('[name=nome]', 'Lenta Verificação');
    await page.fill('[name=email]', 'lenta@example.com');
    await waitSince(at, 3_200);
    const count = received.length;
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-leads-status][data-state=wait]');
    expect(await page.locator('[data-leads-status]').textContent()).toBe('Complete the verification below; the form will then be sent.');
    expect(received).toHaveLength(count);
    await widget.click();
    await page.waitForSelector('[data-leads-status][data-state=success]');
    expect(received).toHaveLength(count + 1);
    expect(received[count]['captcha-token']).toBe(TURNSTILE_TEST.dummyToken);
    expect(await storedLead(captcha, 'lenta@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });
  });

  it('with hCaptcha: its widget is rendered with hcaptcha.render, and the response the person gives goes in Captcha-Token', async () => {
    const { token, at } = await open(`${siteBase}/hcaptcha`);
    const widget = page.locator(`form[data-leads] [data-leads-captcha] [data-stand-in-widget="${HCAPTCHA_TEST.siteKey}"]`);
    await widget.waitFor();
    expect(await page.evaluate('typeof window.turnstile')).toBe('undefined');
    await page.fill('[name=nome]', 'Pessoa hCaptcha');
    await page.fill('[name=email]', 'hcaptcha@example.com');
    await widget.click();
    await waitSince(at, 3_200);
    const headers = await send({});
    expect(headers['captcha-token']).toBe(HCAPTCHA_TEST.response);
    expect(headers['form-token']).toBe(token);
    expect(verifications()).toContainEqual(expect.objectContaining({ secret: HCAPTCHA_TEST.secret, response: HCAPTCHA_TEST.response }));
    expect(await storedLead(hcaptcha, 'hcaptcha@example.com')).toEqual({ verdict: 'accepted', reasons: [], channel: 'form' });
  });

  it('with a captcha provider whose widget script cannot load: the lead is still sent, without Captcha-Token, and held', async () => {
    await page.route(`${siteBase}/widget.js`, (route) => route.abort());
    const { at } = await open(`${siteBase}/captcha`);
    await page.fill('[name=nome]', 'Sem Widget');
    await page.fill('[name=email]', 'sem.widget@example.com');
    await waitSince(at, 3_200);
    const headers = await send({});
    expect(headers['captcha-token']).toBeUndefined();
    expect(headers['form-token']).toBeDefined();
    expect(await storedLead(captcha, 'sem.widget@example.com')).toEqual({ verdict: 'held', reasons: ['captcha_missing'], channel: 'form' });
  });

  const shot2 = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
});
