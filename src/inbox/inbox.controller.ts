import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { InboxForm, InboxPage, PublicInboxPage } from './inbox-page.guard.js';
import { InboxPages } from './inbox-pages.service.js';
import { AppError } from '../problem/app-error.js';
import { InboxOidc } from './inbox-oidc.service.js';
import { InboxSignIn } from './inbox-sign-in.service.js';
import { isLanguage } from './inbox-messages.js';
import { inboxStateOf } from './inbox-sessions.service.js';
import { INBOX_HOME, safeReturnPath } from './return-path.js';

/** A year: the language choice outlives sessions. */
const LANGUAGE_COOKIE_SECONDS = 365 * 86_400;

/** The inbox's door: its home, the sign-in page, sign-out and the language switch. */
@Controller('inbox')
export class InboxController {
  constructor(
    private readonly pages: InboxPages,
    private readonly signIn: InboxSignIn,
    private readonly oidc: InboxOidc,
  ) {}

  /** The leads, or the sign-in page first. */
  @Get()
  @PublicInboxPage()
  home(@Req() req: Request, @Res() res: Response): void {
    this.pages.redirect(res, inboxStateOf(req).person ? INBOX_HOME : '/inbox/sign-in');
  }

  @Get('sign-in')
  @PublicInboxPage()
  signInPage(@Req() req: Request, @Res() res: Response): void {
    const returnPath = safeReturnPath(req.query.return);
    this.pages.render(req, res, 'sign-in', { returnPath, email: '', error: undefined, signedOut: req.query['signed-out'] === '1' }, { title: 'signIn.title' });
  }

  /** Sends a code to the address (if it is a person's: the same page either way) and shows the code field. */
  @Post('sign-in')
  @PublicInboxPage()
  requestCode(@Req() req: Request, @Res() res: Response, @InboxForm() form: URLSearchParams): Promise<void> {
    if (this.oidc.settings?.only) return this.codesOff(res);
    return this.signIn.requestCode(req, res, form);
  }

  /** A right code starts a session (a new id) and lands on the return path; five wrong ones end the attempt. */
  @Post('sign-in/code')
  @PublicInboxPage()
  enterCode(@Req() req: Request, @Res() res: Response, @InboxForm() form: URLSearchParams): Promise<void> {
    if (this.oidc.settings?.only) return this.codesOff(res);
    return this.signIn.enterCode(req, res, form);
  }

  /** To the OpenID Provider (OIDC_ISSUER), with `return` kept for after. */
  @Get('oidc/start')
  @PublicInboxPage()
  oidcStart(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.oidc.settings) throw new AppError('not_found', 'Single sign-on is not configured.');
    return this.oidc.start(req, res);
  }

  /** The provider sends the browser back here with a code (or an error). */
  @Get('oidc/callback')
  @PublicInboxPage()
  oidcCallback(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.oidc.settings) throw new AppError('not_found', 'Single sign-on is not configured.');
    return this.oidc.callback(req, res);
  }

  /** OIDC_ONLY: the code forms are gone, and so are their actions. */
  private async codesOff(res: Response): Promise<void> {
    this.pages.redirect(res, '/inbox/sign-in');
  }

  @Post('sign-out')
  @InboxPage()
  signOut(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.signIn.signOut(req, res);
  }

  /** Stores the choice in a cookie and goes back to the page it was made on. */
  @Post('language')
  @PublicInboxPage()
  language(@Res() res: Response, @InboxForm() form: URLSearchParams): void {
    const language = form.get('language');
    if (isLanguage(language)) this.pages.sessions.cookies.set(res, 'inbox_lang', language, LANGUAGE_COOKIE_SECONDS);
    this.pages.redirect(res, safeReturnPath(form.get('return')));
  }
}
