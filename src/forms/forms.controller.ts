import { Controller, Get, Header, Inject } from '@nestjs/common';
import { AppConfig, CaptchaConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { FormTokens, IssuedFormToken } from './form-tokens.service.js';
import { examplePage } from './forms.page.js';
import { LEADS_FORM_JS } from './forms.script.js';

/** What the form script needs to render the captcha widget: never the secret nor the verify URL. */
export interface FormCaptcha {
  provider: CaptchaConfig['provider'];
  site_key: string;
  script_url: string;
}

/** GET /forms/token's answer. */
export interface FormTokenAnswer extends IssuedFormToken {
  captcha: FormCaptcha | null;
}

@Controller('forms')
export class FormsController {
  private readonly example: string;
  private readonly captcha: FormCaptcha | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly tokens: FormTokens,
  ) {
    this.example = examplePage(config.publicBaseUrl);
    const captcha = config.captcha;
    this.captcha = captcha && { provider: captcha.provider, site_key: captcha.siteKey, script_url: captcha.scriptUrl };
  }

  /** Loaded by customer sites on other origins. */
  @Get('leads.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  @Header('Access-Control-Allow-Origin', '*')
  @Header('Cross-Origin-Resource-Policy', 'cross-origin')
  script(): string {
    return LEADS_FORM_JS;
  }

  /** Fetched by the form script each time it shows a form, from any origin; its own per-address quota. */
  @Get('token')
  @RateLimit('form_token')
  @Header('Cache-Control', 'no-store')
  @Header('Access-Control-Allow-Origin', '*')
  async token(): Promise<FormTokenAnswer> {
    return { ...(await this.tokens.issue()), captcha: this.captcha };
  }

  @Get('example')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  page(): string {
    return this.example;
  }
}
