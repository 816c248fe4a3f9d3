import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { allowedMethods } from '../request/allowed-methods.js';
import { safeError } from '../logging/safe-error.js';
import { requestIdOf } from '../request/request-id.js';
import { BODY_LIMIT_BYTES, inKiB } from '../server/http-limits.js';
import { AUTH_FAILURE_KINDS, Metrics } from '../telemetry/metrics.js';
import { AppError, serviceUnavailable } from './app-error.js';
import { ERROR_CATALOG, ErrorCode } from './error-catalog.js';
import { buildProblem, PROBLEM_MEDIA_TYPE } from './problem.js';
import { ProblemFormats } from './problem-formats.js';

/** Client errors raised by the framework itself (router, parsers) rather than by our code, by HTTP status. */
const FRAMEWORK_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

function isClientHttpError(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: unknown }).expose === true;
}

/** The body parser's error types (http-errors `type`) and what they mean for the client. */
const BODY_PARSER_ERRORS: Record<string, [ErrorCode, string, Record<string, string>?]> = {
  'entity.too.large': ['payload_too_large', `The request body is larger than ${inKiB(BODY_LIMIT_BYTES)}.`],
  // RFC 9110 §15.5.16: Accept-Encoding tells the client that the coding, not the media type, was refused.
  'encoding.unsupported': [
    'unsupported_media_type',
    'The Content-Encoding of the body is not supported; use gzip, deflate, br or identity.',
    { 'Accept-Encoding': 'gzip, deflate, br, identity' },
  ],
  'charset.unsupported': ['unsupported_media_type', 'The charset of the body is not supported; use UTF-8.'],
  'request.aborted': ['bad_request', 'The client closed the connection before the body was complete.'],
  'request.size.invalid': ['bad_request', 'The body length does not match the Content-Length header.'],
};

const DATABASE_WARNING_INTERVAL_MS = 10_000;

/** Refusals without a quota of their own (a limit per address or purpose) count as this tier. */
const TIER_OF_CODE: Partial<Record<ErrorCode, string>> = { verification_rate_limited: 'verification', confirmation_rate_limited: 'confirmation' };

/**
 * The one place where every error becomes an RFC 9457 problem, shaped by the format a module registered for its paths;
 * and so the one place that counts refusals: of leads, of credentials, of quotas.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');
  private lastDatabaseWarning = 0;
  private unloggedDatabaseFailures = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly formats: ProblemFormats,
    private readonly metrics: Metrics,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const error = this.toAppError(exception, req);
    if (res.headersSent) {
      res.end();
      return;
    }
    const instance = req.originalUrl.split('?')[0];
    this.count(error, req.method, req.path);
    const problem = buildProblem(this.config.publicBaseUrl, error.code, error.detail, {
      instance,
      requestId: requestIdOf(req),
      errors: error.options.errors,
      extensions: error.options.extensions,
    });
    for (const [name, value] of Object.entries(error.options.headers ?? {})) res.setHeader(name, value);

    const { body, mediaType, status } = this.formats.forPath(instance)?.render(problem, req, res) ?? { body: problem, mediaType: PROBLEM_MEDIA_TYPE };
    res
      .status(status ?? problem.status)
      .type(`${mediaType}; charset=utf-8`)
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  }

  private count(error: AppError, method: string, path: string): void {
    const tier = error.options.tier ?? TIER_OF_CODE[error.code];
    if (tier !== undefined) this.metrics.rateLimitRefusals.inc({ tier });
    const kind = AUTH_FAILURE_KINDS[error.code];
    if (kind !== undefined) this.metrics.authFailures.inc({ kind });
    // The lead route in any case, with a trailing slash or in absolute form, as Express matches it; MCP's submit_lead
    // counts its own.
    if (method === 'POST' && /^\/api\/v1\/lead\/?$/i.test(path)) this.metrics.leadsRefused.inc({ code: error.code });
  }

  /** One line per 10 s at most, with how many more failed: an outage under load would otherwise log every request. */
  private warnDatabaseUnavailable(exception: unknown, req: Request): void {
    const now = Date.now();
    if (now - this.lastDatabaseWarning < DATABASE_WARNING_INTERVAL_MS) {
      this.unloggedDatabaseFailures++;
      return;
    }
    this.logger.warn({ ...requestOf(req), error: safeError(exception), alsoFailedSinceLastLine: this.unloggedDatabaseFailures }, 'database unavailable');
    this.lastDatabaseWarning = now;
    this.unloggedDatabaseFailures = 0;
  }

  private toAppError(exception: unknown, req: Request): AppError {
    if (exception instanceof AppError) return exception;
    const parserError = bodyParserError(exception);
    if (parserError) return parserError;
    if (exception instanceof HttpException && exception.getStatus() === 404) {
      const allow = allowedMethods(req);
      if (allow.length) {
        return new AppError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow.join(', ')}.`, {
          headers: { Allow: allow.join(', ') },
        });
      }
      return new AppError('not_found', `Nothing is served at ${req.path}.`);
    }
    if (isDatabaseUnavailable(exception)) {
      this.warnDatabaseUnavailable(exception, req);
      // A statement that timed out may still have committed: the retry advice covers that case too.
      return serviceUnavailable('The database is unavailable or did not answer in time; retry with the same Idempotency-Key, which never stores a lead twice.');
    }
    if (exception instanceof HttpException || isClientHttpError(exception)) {
      const status = exception instanceof HttpException ? exception.getStatus() : (exception as { status: number }).status;
      const code = FRAMEWORK_STATUS_CODES[status];
      if (code)
        return new AppError(
          code,
          code === 'bad_request'
            ? 'The request could not be understood (for example a malformed percent-encoding in the path).'
            : ERROR_CATALOG[code].description,
        );
    }
    this.logger.error({ ...requestOf(req), error: safeError(exception) }, 'unexpected error');
    return new AppError('internal_error', 'An unexpected error occurred.');
  }
}

/** Which request a log line is about: its id (the client has it in the problem) and its path, never the query. */
function requestOf(req: Request): { requestId: string; path: string } {
  return { requestId: requestIdOf(req), path: req.path };
}

function bodyParserError(exception: unknown): AppError | undefined {
  const type = (exception as { type?: unknown } | null)?.type;
  const known = typeof type === 'string' ? BODY_PARSER_ERRORS[type] : undefined;
  return known && new AppError(known[0], known[1], { headers: known[2] });
}
