import { Controller, Get, Header, Inject } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { examplePage } from './forms.page.js';
import { LEADS_FORM_JS } from './forms.script.js';

@Controller('forms')
export class FormsController {
  private readonly example: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.example = examplePage(config.publicBaseUrl);
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

  @Get('example')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  page(): string {
    return this.example;
  }
}
