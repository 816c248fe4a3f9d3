import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { fieldFailure } from '../leads/lead-rules.js';
import { PeopleService } from '../people/people.service.js';
import { AppError } from '../problem/app-error.js';
import { clientIp } from '../request/client-ip.js';
import { CODE_LIFETIME_MS, VerificationService } from '../verification/verification.service.js';
import { InboxPages } from './inbox-pages.service.js';
import { safeReturnPath } from './return-path.js';

export const SIGN_IN_PURPOSE = 'inbox_sign_in';

const audit = new Logger('InboxAudit');

/**
 * Sign-in by a code sent by e-mail (issue 35). An address that is nobody's gets the same pages, the same statuses and
 * the same writes (VerificationService queues its message and never sends it). The attempt is an HttpOnly cookie that
 * holds the verification's token; five wrong codes end it. A right code starts a session with a new id.
 */
@Injectable()
export class InboxSignIn {
  constructor(
    private readonly pages: InboxPages,
    private readonly people: PeopleService,
    private readonly verifications: VerificationService,
  ) {}

  async requestCode(req: Request, res: Response, form: URLSearchParams): Promise<void> {
    const email = (form.get('email') ?? '').trim();
    const returnPath = safeReturnPath(form.get('return'));
    if (fieldFailure('email', email) !== undefined) {
      return this.pages.render(req, res, 'sign-in', { email, returnPath, error: 'signIn.invalidEmail' }, { title: 'signIn.title' });
    }
    const person = await this.people.byAddress(email);
    const started = await this.verifications.start({
      purpose: SIGN_IN_PURPOSE,
      address: email,
      subject: person?.id ?? null,
      language: this.pages.language(req),
      clientIp: clientIp(req),
    });
    if (!started.started)
      throw new AppError('rate_limited', 'Too many sign-in codes were asked for; try again later.', {
        headers: { 'Retry-After': '600' },
        tier: 'sign_in_code',
      });
    this.pages.sessions.cookies.set(res, 'inbox_attempt', started.token, CODE_LIFETIME_MS / 1000);
    // Housekeeping where sessions begin, so that no timer is needed: sessions past a timeout that nobody came back to.
    await this.pages.sessions.purge();
    this.pages.render(req, res, 'sign-in-code', { email, returnPath, error: undefined }, { title: 'code.title' });
  }

  async enterCode(req: Request, res: Response, form: URLSearchParams): Promise<void> {
    const returnPath = safeReturnPath(form.get('return'));
    const email = (form.get('email') ?? '').slice(0, 320);
    const result = await this.verifications.check(SIGN_IN_PURPOSE, this.pages.sessions.cookies.read(req, 'inbox_attempt'), form.get('code'));
    if (result.verified) {
      const person = await this.people.byId(result.subject);
      if (person) {
        await this.pages.sessions.start(req, res, person.id);
        this.pages.sessions.cookies.clear(res, 'inbox_attempt');
        audit.log({ audit: 'inbox_sign_in', user_id: person.id, role: person.role }, 'inbox sign-in');
        return this.pages.redirect(res, returnPath);
      }
    }
    if (!result.verified && result.triesLeft > 0) {
      const error = { key: 'code.wrong', params: { left: result.triesLeft } };
      return this.pages.render(req, res, 'sign-in-code', { email, returnPath, error }, { title: 'code.title' });
    }
    this.pages.sessions.cookies.clear(res, 'inbox_attempt');
    this.pages.render(req, res, 'sign-in', { email, returnPath, error: 'code.ended' }, { title: 'signIn.title' });
  }

  async signOut(req: Request, res: Response): Promise<void> {
    const person = this.pages.sessions.personOf(req);
    await this.pages.sessions.end(req, res);
    if (person) audit.log({ audit: 'inbox_sign_out', user_id: person.userId }, 'inbox sign-out');
    this.pages.redirect(res, '/inbox/sign-in?signed-out=1');
  }
}
