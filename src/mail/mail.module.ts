import { join } from 'node:path';
import { Global, Inject, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { EmlMailer } from './eml-mailer.js';
import { EtaMailTemplates } from './eta-mail-templates.js';
import { MAIL_TEMPLATES } from './mail-templates.js';
import { MAILER, type Mailer } from './mailer.js';
import { SmtpMailer } from './smtp-mailer.js';

/** The .eml folder when SMTP_URL is unset. */
export const mailFolder = (config: AppConfig): string => join(config.dataDir, 'mail');

/** SMTP_URL's server, or .eml files under DATA_DIR/mail/ without it. */
export function createMailer(config: AppConfig): SmtpMailer | EmlMailer {
  return config.mail.smtpUrl ? new SmtpMailer(config.mail) : new EmlMailer(config.mail, mailFolder(config));
}

/**
 * The one Mailer (MAILER) and the e-mail templates (MAIL_TEMPLATES), for every module: the e-mail channel, the digest,
 * and the erasure, which deletes the .eml files of the leads it erases (`mailer.forgetLeads`).
 */
@Global()
@Module({
  providers: [
    { provide: MAILER, inject: [APP_CONFIG], useFactory: createMailer },
    { provide: MAIL_TEMPLATES, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new EtaMailTemplates(config.timeZone) },
  ],
  exports: [MAILER, MAIL_TEMPLATES],
})
export class MailModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(MAILER) private readonly mailer: Mailer & { start?(): void; close(): void }) {}

  onApplicationBootstrap(): void {
    this.mailer.start?.();
  }

  onModuleDestroy(): void {
    this.mailer.close();
  }
}
