import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pageFormOf } from '../body/request-body.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError } from '../problem/app-error.js';
import type { PageLanguage } from '../docs/person-page.js';
import { accessPage, CaptchaWidget, codePage, endPage, erasedPage, Notice, revokedPage, startPage } from './privacy-pages.js';
import { PrivacyRequestsService } from './privacy-requests.service.js';
import { languageOf, postedFrom, sendPersonPage } from '../docs/person-page.js';

/** The field each provider's widget adds to the form it sits in. */
const WIDGET_FIELD = { turnstile: 'cf-turnstile-response', hcaptcha: 'h-captcha-response' } as const;
const WIDGET_CLASS = { turnstile: 'cf-turnstile', hcaptcha: 'h-captcha' } as const;

/** The problems of the API that a page answers in words, with the page and the status. */
const NOTICES: Partial<Record<string, { notice: Notice; status: number }>> = {
  verification_code_invalid: { notice: 'wrongCode', status: 400 },
  privacy_request_locked: { notice: 'locked', status: 409 },
  privacy_request_verified: { notice: 'done', status: 409 },
  privacy_request_expired: { notice: 'expired', status: 410 },
  privacy_request_not_found: { notice: 'notFound', status: 404 },
  verification_rate_limited: { notice: 'tooMany', status: 429 },
  captcha_failed: { notice: 'captcha', status: 403 },
  validation_failed: { notice: 'invalid', status: 422 },
};

/**
 * `/privacy`: the person's own requests as pages (issue 36), over the API's service. Forms post with no cookie and no
 * script of ours: the request's id is in the action, the code in the form, the download token in the result page's
 * form. There is no session a forged post could ride on; a browser's post from another site is refused by Origin.
 */
@Injectable()
export class PrivacyPages {
  private readonly base: string;
  private readonly captcha?: CaptchaWidget & { field: string; origin: string };
  private readonly dates: Record<PageLanguage, Intl.DateTimeFormat>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly requests: PrivacyRequestsService,
  ) {
    this.base = config.publicBaseUrl;
    const captcha = config.captcha;
    if (captcha) {
      // The widget renders itself where the script finds its class: no script of ours, so no inline script for the CSP.
      const script = new URL(captcha.scriptUrl);
      script.searchParams.delete('render');
      this.captcha = {
        className: WIDGET_CLASS[captcha.provider],
        siteKey: captcha.siteKey,
        scriptUrl: script.toString(),
        field: WIDGET_FIELD[captcha.provider],
        origin: script.origin,
      };
    }
    const format = (locale: string) => new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: config.timeZone });
    this.dates = { 'pt-BR': format('pt-BR'), en: format('en-GB') };
  }

  show(req: Request, res: Response): void {
    this.send(res, 200, startPage(languageOf(req, req.query.lang), {}, this.captcha), true);
  }

  async start(req: Request, res: Response): Promise<void> {
    this.checkOrigin(req);
    const form = await pageFormOf(req);
    const lang = languageOf(req, form.lang);
    try {
      const receipt = await this.requests.create(
        { type: form.type, email: form.email, language: lang },
        req,
        this.captcha ? form[this.captcha.field] : undefined,
      );
      this.send(res, 200, codePage(lang, receipt.id));
    } catch (error) {
      const known = error instanceof AppError ? NOTICES[error.code] : undefined;
      if (!known) throw error;
      const page =
        known.notice === 'tooMany' ? endPage(lang, 'tooMany') : startPage(lang, { type: form.type, email: form.email, notice: known.notice }, this.captcha);
      this.send(res, known.status, page, known.notice !== 'tooMany');
    }
  }

  async verify(id: string, req: Request, res: Response): Promise<void> {
    this.checkOrigin(req);
    const form = await pageFormOf(req);
    const lang = languageOf(req, form.lang);
    let result;
    try {
      result = await this.requests.verify(id, { code: form.code ?? '' });
    } catch (error) {
      const known = error instanceof AppError ? NOTICES[error.code] : undefined;
      if (!known) throw error;
      // A code that is not even six digits spent no try: the form again, saying what a code looks like.
      const page =
        known.notice === 'wrongCode'
          ? codePage(lang, id, { notice: 'wrongCode', triesLeft: Number((error as AppError).options.extensions?.tries_left ?? 0) })
          : known.notice === 'invalid'
            ? codePage(lang, id, { notice: 'badCode' })
            : endPage(lang, known.notice);
      this.send(res, known.status, page);
      return;
    }
    if (result.type === 'erasure') return this.send(res, 200, erasedPage(lang, result.counts.leads));
    if (result.type === 'consent_revocation') return this.send(res, 200, revokedPage(lang, result.counts.leads));
    const format = (iso: string) => this.dates[lang].format(new Date(iso));
    this.send(res, 200, accessPage(lang, id, { summary: result.summary, data: result.data, downloadToken: result.download_token }, format));
  }

  async download(id: string, req: Request, res: Response): Promise<void> {
    this.checkOrigin(req);
    const form = await pageFormOf(req);
    await this.requests.download(id, form.download_token, req, res);
  }

  private checkOrigin(req: Request): void {
    if (!postedFrom(req, this.base)) throw new AppError('origin_not_allowed', "This form may be posted only from this service's own page.");
  }

  private send(res: Response, status: number, html: string, withCaptcha = false): void {
    const origin = withCaptcha ? this.captcha?.origin : undefined;
    // The provider's widget is its script and its frame: allowed on the pages that show it, and only there.
    const csp = origin
      ? `default-src 'self'; script-src 'self' ${origin}; frame-src ${origin}; connect-src 'self' ${origin}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'`
      : undefined;
    sendPersonPage(res, status, html, csp);
  }
}
