import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pageFormOf } from '../body/request-body.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { languageOf, PageLanguage, postedFrom, sendPersonPage } from '../docs/person-page.js';
import { AppError } from '../problem/app-error.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { claimMessagePage, claimPage } from './claim-page.js';
import { ClaimsService } from './claims.service.js';

/**
 * The claim's `verification_uri` (issue 36): a page in pt-BR and English whose first form posts the user code and the
 * e-mailed code, with no cookie and no script; opening it changes nothing (mail scanners open links).
 */
@Controller('claim')
@RateLimit('api')
export class ClaimPageController {
  private readonly base: string;
  private readonly dates: Record<PageLanguage, Intl.DateTimeFormat>;

  constructor(
    private readonly claims: ClaimsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.base = config.publicBaseUrl;
    const format = (locale: string) => new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: config.timeZone });
    this.dates = { 'pt-BR': format('pt-BR'), en: format('en-GB') };
  }

  @Get(':id')
  async show(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const lang = languageOf(req, req.query.lang);
    const facts = await this.claims.facts(id);
    if (!facts) return sendPersonPage(res, 404, claimMessagePage(lang, id, 'unknown'));
    if (!facts.open) return sendPersonPage(res, 410, claimMessagePage(lang, id, 'ended'));
    sendPersonPage(res, 200, claimPage(lang, id, this.dates[lang].format(facts.registeredAt)));
  }

  @Post(':id')
  async confirm(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (!postedFrom(req, this.base)) throw new AppError('origin_not_allowed', "This form may be posted only from this service's own page.");
    const form = await pageFormOf(req);
    const lang = languageOf(req, form.lang);
    const facts = await this.claims.facts(id);
    if (!facts) return sendPersonPage(res, 404, claimMessagePage(lang, id, 'unknown'));
    const { outcome, triesLeft } = await this.claims.confirm(id, form.user_code, form.email_code);
    if (outcome === 'confirmed') return sendPersonPage(res, 200, claimMessagePage(lang, id, 'done'));
    if (outcome === 'ended') return sendPersonPage(res, 410, claimMessagePage(lang, id, 'ended'));
    sendPersonPage(res, 400, claimPage(lang, id, this.dates[lang].format(facts.registeredAt), { triesLeft }));
  }
}
