import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { MANAGE_PEOPLE } from '../people/roles.js';
import { assetUrl } from './inbox-assets.js';
import { languageOf } from './inbox-language.js';
import { Language, Messages, Translate, translator } from './inbox-messages.js';
import { inboxStateOf, InboxSessions, PersonPrincipal } from './inbox-sessions.service.js';
import { InboxViews } from './inbox-views.js';
import { CORE_MESSAGES } from './messages/core.js';

/** The header's areas, each shown to a person holding any of its scopes. */
const AREAS = [
  { area: 'leads', href: '/inbox/leads', label: 'nav.leads', scopes: ['leads:read'] },
  { area: 'held', href: '/inbox/held', label: 'nav.held', scopes: ['leads:screen'] },
  { area: 'requests', href: '/inbox/requests', label: 'nav.requests', scopes: ['leads:read'] },
  { area: 'settings', href: '/inbox/settings', label: 'nav.settings', scopes: ['notifications:manage', 'webhooks:manage', MANAGE_PEOPLE] },
];

function navFor(person: PersonPrincipal | undefined, current: string | undefined): PageFrame['nav'] {
  if (!person) return [];
  return AREAS.filter(({ scopes }) => scopes.some((scope) => person.scopes.includes(scope))).map(({ area, href, label }) => ({
    href,
    label,
    current: area === current,
  }));
}

/** What every template gets as `it.page` (beside `it.t` and the page's own data). */
export interface PageFrame {
  language: Language;
  csrfToken: string;
  /** The signed-in person, or undefined on the sign-in pages. */
  person: PersonPrincipal | undefined;
  /** The path and query of this request: the language form's return path. */
  path: string;
  /** The header's links: the areas the person's scopes open, the current one marked. */
  nav: { href: string; label: string; current: boolean }[];
  assets: { css: string; htmx: string; script: string };
  /** Single sign-on, when configured: the provider's name, and whether the code sign-in is off. */
  sso: { name: string; only: boolean } | null;
}

export interface RenderOptions {
  /** The message key of the page's <title> and heading. */
  title: string;
  /** The page's own messages (src/inbox/messages/<area>.ts), beside the core ones. */
  messages?: Messages;
  /** The nav area this page belongs to: leads, held or settings. */
  area?: string;
  status?: number;
}

/**
 * Renders inbox pages: a view of src/inbox/views/ inside the layout, in the person's language, with the CSRF token of
 * the request for its forms. For an htmx request, `fragment` renders the view alone.
 */
@Injectable()
export class InboxPages {
  readonly views = new InboxViews();

  /** The sign-in page's provider button (OIDC_NAME), and whether it is the only way in (OIDC_ONLY). */
  private readonly sso: PageFrame['sso'];

  constructor(
    readonly sessions: InboxSessions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.sso = config.oidc ? { name: config.oidc.name, only: config.oidc.only } : null;
  }

  language(req: Request): Language {
    return languageOf(req, this.sessions.cookies);
  }

  translate(req: Request, messages?: Messages): Translate {
    return translator(this.language(req), CORE_MESSAGES, ...(messages ? [messages] : []));
  }

  frame(req: Request, res: Response, area?: string): PageFrame {
    return {
      language: this.language(req),
      csrfToken: this.sessions.csrfToken(req, res),
      person: inboxStateOf(req).person,
      path: req.originalUrl,
      nav: navFor(inboxStateOf(req).person, area),
      assets: { css: assetUrl('inbox.css'), htmx: assetUrl('htmx.min.js'), script: assetUrl('inbox.js') },
      sso: this.sso,
    };
  }

  /** The whole page, as HTML text. */
  html(req: Request, res: Response, view: string, data: object, options: RenderOptions): string {
    const t = this.translate(req, options.messages);
    const page = this.frame(req, res, options.area);
    const body = this.views.render(view, { ...data, t, page });
    return this.views.render('layout', { t, page, body, title: t(options.title) });
  }

  /** Sends the whole page (200 unless options.status). */
  render(req: Request, res: Response, view: string, data: object, options: RenderOptions): void {
    this.send(res, options.status ?? 200, this.html(req, res, view, data, options));
  }

  /** Sends the view alone, for htmx to swap in (an `HX-Request: true` request). */
  fragment(req: Request, res: Response, view: string, data: object, options: Omit<RenderOptions, 'title'> = {}): void {
    const t = this.translate(req, options.messages);
    this.send(res, options.status ?? 200, this.views.render(view, { ...data, t, page: this.frame(req, res, options.area) }));
  }

  /** Post/Redirect/Get: 303 to a path of the inbox. */
  redirect(res: Response, path: string): void {
    // Not res.redirect(), which writes a body no one reads.
    res.status(303).location(path).end();
  }

  isHtmx(req: Request): boolean {
    return req.headers['hx-request'] === 'true';
  }

  private send(res: Response, status: number, html: string): void {
    res.status(status).type('text/html; charset=utf-8').send(html);
  }
}
