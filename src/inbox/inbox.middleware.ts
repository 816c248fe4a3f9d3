import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { InboxSessions } from './inbox-sessions.service.js';

/**
 * The inbox's own Content-Security-Policy (the service's allows inline styles for Swagger UI; the inbox needs neither
 * inline script nor inline style), and no page of it in a frame, a cache or a search index.
 */
export const INBOX_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setInboxHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', INBOX_CSP);
  // same-origin, not the service's no-referrer: under no-referrer a browser sends its forms' posts with Origin: null.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Robots-Tag', 'noindex');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Vary', 'Cookie, Accept-Language, HX-Request');
  // The service's are for the API, fetched by other sites; the inbox is only ever its own origin's (no CORS either: app.setup.ts).
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
}

/** Every /inbox request: the inbox's headers, and its session (if any) read into the request's principal. */
@Injectable()
export class InboxMiddleware implements NestMiddleware {
  constructor(private readonly sessions: InboxSessions) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    setInboxHeaders(res);
    await this.sessions.resolve(req, res);
    next();
  }
}
