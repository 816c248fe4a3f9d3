import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { PeopleService } from '../../src/people/people.service.js';
import type { Role } from '../../src/people/roles.js';
import { CHROMIUM, CHROMIUM_FLAGS } from './chromium.js';
import { eventually } from './eventually.js';
import { codeOf } from './inbox-session.js';
import { freePort } from './server-process.js';
import { SmtpSink } from './smtp-sink.js';
import { startTestApp, TestApp } from './test-app.js';

/** Where the inbox's screenshots go, at 375 and 1280 px, for a person to look at. */
export const INBOX_ARTIFACTS = join(process.cwd(), 'test-artifacts', 'inbox');
const AXE = readFileSync(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const WIDTHS = [375, 1280] as const;

export type Language = 'pt-BR' | 'en';

/**
 * The inbox as a person's browser sees it: the service listening on a port of its own (PUBLIC_BASE_URL that origin),
 * a real SMTP server that receives the sign-in codes, and Chromium. Each person gets a browser context of their own,
 * in their language, that records the page's console errors (a CSP violation is one) for `problems()`.
 */
export class InboxBrowser {
  private readonly consoleErrors = new Map<Page, string[]>();

  private constructor(
    readonly t: TestApp,
    readonly base: string,
    readonly sink: SmtpSink,
    readonly browser: Browser,
  ) {}

  static async start(env: Record<string, string> = {}): Promise<InboxBrowser> {
    mkdirSync(INBOX_ARTIFACTS, { recursive: true });
    const sink = await SmtpSink.start();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const t = await startTestApp({ PUBLIC_BASE_URL: base, SMTP_URL: sink.url, WEBHOOK_POLL_INTERVAL: '20ms', ...env });
    await t.app.listen(port, '127.0.0.1');
    // launch() gives Chromium a new empty --user-data-dir of its own and deletes it on close.
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    return new InboxBrowser(t, base, sink, browser);
  }

  async close(): Promise<void> {
    await this.browser.close();
    await this.t.close();
    await this.sink.close();
  }

  /** A new person of the inbox (the service's own PeopleService, as `npm run users:add` does). */
  async person(role: Role, email: string): Promise<{ id: string; email: string }> {
    const added = await this.t.app.get(PeopleService).add(email, role);
    if (!added.added) throw new Error(`could not add ${email}: ${added.reason}`);
    return added.person;
  }

  /** A fresh browser (no cookies) whose Accept-Language and locale are the language's. */
  async page(language: Language): Promise<{ context: BrowserContext; page: Page }> {
    const context = await this.browser.newContext({ locale: language, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    this.consoleErrors.set(page, errors);
    // A page's own status is the test's to check; a failed stylesheet or script, a blocked inline script or style, a
    // script error are problems.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    });
    page.on('response', (response) => {
      if (response.request().resourceType() !== 'document' && response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
    page.on('pageerror', (error) => errors.push(error.message));
    return { context, page };
  }

  /** What went wrong in the page: console errors (a CSP violation is one), script errors, failed subresources. */
  problems(page: Page): string[] {
    return this.consoleErrors.get(page) ?? [];
  }

  /**
   * Signs in as a person would: /inbox, the address typed and Enter, the code read from the mail the SMTP server got
   * (the first six-digit number of its text) typed and Enter. Resolves once the browser has landed.
   */
  async signIn(page: Page, email: string, options: { screenshots?: string } = {}): Promise<void> {
    const before = this.sink.to(email).length;
    await page.goto(`${this.base}/inbox`);
    await page.waitForURL(/\/inbox\/sign-in/);
    if (options.screenshots) await this.check(page, `${options.screenshots}-sign-in`);
    await page.fill('input[type="email"]', email);
    await page.press('input[type="email"]', 'Enter');
    await page.waitForSelector('input[name="code"]');
    if (options.screenshots) await this.check(page, `${options.screenshots}-code`);
    const code = codeOf((await this.mail(email, before + 1)).parsed.text!);
    await page.fill('input[name="code"]', code);
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/inbox/sign-in')), page.press('input[name="code"]', 'Enter')]);
  }

  /** The n-th mail (1-based) the SMTP server got for this address, waited for. */
  async mail(email: string, n: number) {
    return eventually(() => this.sink.to(email)[n - 1]);
  }

  /** axe-core on the page (fails on a serious or critical violation), then screenshots at 375 and 1280 px. */
  async check(page: Page, name: string): Promise<void> {
    await expectAccessible(page, name);
    await screenshots(page, name);
  }
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP stays on and still applies to
 * the page's own content) and throws on any serious or critical violation, naming rule and elements.
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate<{ id: string; impact: string; help: string; targets: string[] }[]>(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((node) => node.target.join(' ')) })))`);
  const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (severe.length) throw new Error(`${name}: axe found ${severe.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.targets.join(', ')}`).join('; ')}`);
}

/** The whole page at 375 px (a phone) and 1280 px (a laptop): test-artifacts/inbox/<name>-<width>.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  const viewport = page.viewportSize();
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(INBOX_ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  if (viewport) await page.setViewportSize(viewport);
}

/** Whether the page scrolls sideways at its current width (a layout that does not fit a phone). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');
}

/** What Tab reaches from the top of the page, in order: a description of each focused element. */
export async function tabOrder(page: Page, presses = 20): Promise<string[]> {
  await page.evaluate('document.activeElement?.blur()');
  const reached: string[] = [];
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press('Tab');
    reached.push(
      await page.evaluate<string>(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return 'body';
        return el.tagName.toLowerCase() + ':' + (el.getAttribute('name') ?? el.getAttribute('href') ?? el.textContent?.trim() ?? '');
      })()`),
    );
  }
  return reached;
}
