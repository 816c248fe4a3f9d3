import { Injectable, OnModuleInit } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorCode } from '../problem/error-catalog.js';
import { Problem, PROBLEM_MEDIA_TYPE } from '../problem/problem.js';
import { ProblemFormat, ProblemFormats } from '../problem/problem-formats.js';

/** The path of the OAuth endpoints (OAuthController); every answer under it, errors included, is OAuth's. */
export const OAUTH_PATH = 'oauth2';

/** RFC 6749 §5.2 and RFC 8628 §3.5 codes are passed through; other failures map to the nearest registered OAuth error. */
const OAUTH_ERRORS = new Set<ErrorCode>([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
  // RFC 8628 §3.5, the claim grant's polling answers
  'authorization_pending',
  'slow_down',
  'expired_token',
  'access_denied',
]);

/**
 * Errors under /oauth2/ as RFC 6749 §5.2 clients read them: `error` and `error_description`, with the problem members
 * riding along, never cached, as application/json for a client that asks for it and not for problems.
 */
@Injectable()
export class OAuthErrorFormat implements ProblemFormat, OnModuleInit {
  constructor(private readonly formats: ProblemFormats) {}

  onModuleInit(): void {
    this.formats.register(`/${OAUTH_PATH}/`, this);
  }

  render(problem: Problem, req: Request, res: Response): { body: object; mediaType: string } {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    return {
      body: { error: oauthError(problem.code, problem.status), error_description: problem.detail, ...problem },
      mediaType: prefersPlainJson(req.headers.accept) ? 'application/json' : PROBLEM_MEDIA_TYPE,
    };
  }
}

function oauthError(code: ErrorCode, status: number): string {
  if (OAUTH_ERRORS.has(code)) return code;
  if (status === 503) return 'temporarily_unavailable';
  return status >= 500 ? 'server_error' : 'invalid_request';
}

function prefersPlainJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept
    .toLowerCase()
    .split(',')
    .map((part) => part.split(';')[0].trim());
  return types.includes('application/json') && !types.includes(PROBLEM_MEDIA_TYPE);
}
