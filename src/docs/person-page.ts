import type { Request, Response } from 'express';
import { escapeHtml as e } from './docs-layout.js';

/** The languages of the pages people (not operators) open: the privacy requests, the agent claim. */
export type PageLanguage = 'pt-BR' | 'en';

/** The language a person chose (a form's `lang`, a page's `?lang=`), else the browser's Accept-Language, else pt-BR. */
export function languageOf(req: Request, chosen?: unknown): PageLanguage {
  if (chosen === 'pt-BR' || chosen === 'en') return chosen;
  const accepted = req.acceptsLanguages('pt-BR', 'pt', 'en');
  return typeof accepted === 'string' && accepted.toLowerCase().startsWith('en') ? 'en' : 'pt-BR';
}

/** A person's page up to its body: the docs' stylesheet, no script of ours, not indexed; `head`, what a page adds. */
export function personPageHead(lang: PageLanguage, title: string, head = ''): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(title)}</title>
<link rel="stylesheet" href="/docs/assets/docs.css">
${head}</head>`;
}

/**
 * A page for a person, in one language with a link to the other (`path` with `?lang=`): the docs' stylesheet, no
 * script of ours, not indexed.
 */
export function personPage(lang: PageLanguage, path: string, title: string, body: string, head = ''): string {
  const other = lang === 'en' ? { lang: 'pt-BR', label: 'Português' } : { lang: 'en', label: 'English' };
  return `${personPageHead(lang, title, head)}
<body>
<main class="person">
<nav class="meta" aria-label="${other.label}"><a href="${e(path)}?lang=${other.lang}" hreflang="${other.lang}" lang="${other.lang}">${other.label}</a></nav>
<h1>${e(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/**
 * Sends a person's page: never cached (it may show personal data or carry a token), not indexed, and a referrer
 * policy under which the browser still names this origin when the page's form posts (the forms check Origin).
 */
export function sendPersonPage(res: Response, status: number, html: string, contentSecurityPolicy?: string): void {
  res.status(status);
  res.setHeader('Cache-Control', 'no-store');
  // same-origin, not the service's no-referrer: under no-referrer a browser posts the page's form with Origin: null.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Robots-Tag', 'noindex');
  if (contentSecurityPolicy) res.setHeader('Content-Security-Policy', contentSecurityPolicy);
  res.type('text/html; charset=utf-8').send(html);
}

/** A browser's POST from another site's page names it in Origin (or "null"); a request without Origin is no browser's form. */
export function postedFrom(req: Request, base: string): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === base;
}
