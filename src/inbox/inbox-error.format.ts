import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Request, Response } from 'express';
import { safeError } from '../logging/safe-error.js';
import { ProblemFormat, ProblemFormats } from '../problem/problem-formats.js';
import { Problem, PROBLEM_MEDIA_TYPE } from '../problem/problem.js';
import { InboxPages } from './inbox-pages.service.js';
import { setInboxHeaders } from './inbox.middleware.js';

/** The message that explains a problem on the error page; other codes get the generic one, with their code. */
const MESSAGE_BY_CODE: Record<string, string> = {
  not_found: 'error.404',
  lead_not_found: 'error.404',
  method_not_allowed: 'error.404',
  insufficient_scope: 'error.403',
  csrf_token_invalid: 'error.csrf',
  rate_limited: 'error.rateLimited',
};

/**
 * Errors under /inbox are pages, in the person's language (problem codes shown for support), never JSON: without a
 * session, a browser is sent to sign in and come back (303), and htmx is told to go there (HX-Redirect).
 */
@Injectable()
export class InboxErrorFormat implements ProblemFormat, OnModuleInit {
  private readonly logger = new Logger('InboxErrorFormat');

  constructor(
    private readonly formats: ProblemFormats,
    private readonly pages: InboxPages,
  ) {}

  onModuleInit(): void {
    this.formats.register('/inbox', this);
  }

  render(problem: Problem, req: Request, res: Response): { body: object | string; mediaType: string; status?: number } {
    setInboxHeaders(res);
    if (problem.code === 'inbox_sign_in_required') {
      const target = `/inbox/sign-in${req.method === 'GET' ? `?return=${encodeURIComponent(req.originalUrl)}` : ''}`;
      if (this.pages.isHtmx(req)) {
        res.setHeader('HX-Redirect', target);
        return { body: problem, mediaType: PROBLEM_MEDIA_TYPE };
      }
      res.setHeader('Location', target);
      return { body: '', mediaType: 'text/html', status: 303 };
    }
    // A client that asks for the problem (a script, a test) gets it; a browser, the page.
    if (req.accepts(['text/html', PROBLEM_MEDIA_TYPE]) === PROBLEM_MEDIA_TYPE) return { body: problem, mediaType: PROBLEM_MEDIA_TYPE };
    try {
      const message = MESSAGE_BY_CODE[problem.code] ?? 'error.generic';
      const html = this.pages.html(req, res, 'error', { problem, message }, { title: 'error.title' });
      return { body: html, mediaType: 'text/html' };
    } catch (error) {
      // The page itself failed (its session could not be read, say): the problem, as anywhere else.
      this.logger.warn({ error: safeError(error) }, 'inbox error page failed');
      return { body: problem, mediaType: PROBLEM_MEDIA_TYPE };
    }
  }
}
