import { ErrorCode, FieldError, ProblemError, QueryError } from './error-catalog.js';

/** A failure with a catalog code; the problem filter turns it into application/problem+json. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: {
      errors?: ProblemError[];
      headers?: Record<string, string>;
      extensions?: Record<string, unknown>;
      /** The rate-limit tier that refused (not in the body): the refusals' metric is counted by it. */
      tier?: string;
    } = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

/** Seconds a client should wait before retrying when a dependency is down. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** A dependency (the database) is down: 503 with Retry-After, whoever notices it. */
export function serviceUnavailable(detail: string, extensions?: Record<string, unknown>): AppError {
  return new AppError('service_unavailable', detail, { headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }, extensions });
}

export function validationFailed(errors: FieldError[]): AppError {
  const fields = errors.length === 1 ? `${errors[0].pointer || 'the body'}` : `${errors.length} fields`;
  return new AppError('validation_failed', `The request has invalid input in ${fields}.`, { errors });
}

export function invalidQuery(errors: QueryError[]): AppError {
  const parameters = errors.length === 1 ? errors[0].parameter : `${errors.length} parameters`;
  return new AppError('invalid_query', `The query has invalid input in ${parameters}.`, { errors });
}
