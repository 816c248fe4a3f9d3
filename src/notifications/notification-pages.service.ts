import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pageFormOf } from '../body/request-body.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError } from '../problem/app-error.js';
import { confirmationPage, confirmedPage, invalidLinkPage, unsubscribedPage, unsubscribePage } from './notification-pages.js';
import { NotificationRecipientsService } from './notification-recipients.service.js';
import { CONFIRM_PATH, isToken, UNSUBSCRIBE_PATH } from './recipient-links.js';

/**
 * The pages the e-mails' links open (docs/decisions/0036-notification-recipients.md). A GET never changes anything
 * (mail scanners open every link); the page's form posts. A browser always gets a page, an invalid link's included;
 * any other client gets the status (404 notification_link_invalid), so a mail client's one-click request learns that
 * it failed.
 */
@Injectable()
export class NotificationPages {
  private readonly base: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly recipients: NotificationRecipientsService,
  ) {
    this.base = config.publicBaseUrl;
  }

  async showConfirmation(req: Request, res: Response): Promise<string> {
    const token = req.query.token;
    const valid = isToken(token) && (await this.recipients.confirmable(token));
    return this.answer(req, res, valid ? confirmationPage(`${this.base}${CONFIRM_PATH}`, token as string) : undefined);
  }

  async confirm(req: Request, res: Response): Promise<string> {
    this.checkOrigin(req);
    const { token } = await this.form(req, ['token']);
    if (token === undefined) throw new AppError('invalid_form', 'The body must carry token, form-encoded, as the confirmation page sends it.');
    const confirmed = isToken(token) && (await this.recipients.confirm(token));
    return this.answer(req, res, confirmed ? confirmedPage() : undefined);
  }

  async showUnsubscribe(req: Request, res: Response): Promise<string> {
    const token = req.query.token;
    const valid = await this.recipients.unsubscribable(token);
    return this.answer(req, res, valid ? unsubscribePage(`${this.base}${UNSUBSCRIBE_PATH}?token=${token as string}`) : undefined);
  }

  /**
   * RFC 8058: the body is `List-Unsubscribe=One-Click`, no cookie. No Origin check: mail clients post from their
   * servers, and the token in the URL is the one credential, whoever sends it.
   */
  async unsubscribe(req: Request, res: Response): Promise<string> {
    const form = await this.form(req, ['List-Unsubscribe']);
    if (form['List-Unsubscribe'] !== 'One-Click') {
      throw new AppError('invalid_form', 'The body must be List-Unsubscribe=One-Click, form-encoded (RFC 8058).');
    }
    const done = await this.recipients.unsubscribe(req.query.token);
    return this.answer(req, res, done ? unsubscribedPage() : undefined);
  }

  /** The page (200), or for an invalid link its page to a browser and the 404 problem to any other client. */
  private answer(req: Request, res: Response, html: string | undefined): string {
    res.setHeader('Cache-Control', 'no-store');
    if (html === undefined && req.accepts(['application/problem+json', 'text/html']) !== 'text/html') {
      throw new AppError('notification_link_invalid', 'This link is not valid; it may have expired, been used, or been replaced by a newer one.');
    }
    // same-origin, not the service's no-referrer: under no-referrer a browser posts the page's form with Origin: null.
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('X-Robots-Tag', 'noindex');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    return html ?? invalidLinkPage();
  }

  /** A browser's POST from another site's page names it in Origin (or "null"); a request without Origin is no browser's form. */
  private checkOrigin(req: Request): void {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.base) {
      throw new AppError('origin_not_allowed', "This form may be posted only from this service's own page.");
    }
  }

  /**
   * The form's fields, form-encoded or multipart (RFC 8058 asks mail receivers for multipart), or invalid_form for a
   * body that is neither (another media type, repeated fields, a file, not UTF-8).
   */
  private async form(req: Request, fields: string[]): Promise<Record<string, string | undefined>> {
    const body = await pageFormOf(req);
    return Object.fromEntries(fields.map((field) => [field, body[field]]));
  }
}
