import { ErrorCode, FieldError } from './error-catalog.js';

/** A failure with a catalog code; the problem filter turns it into application/problem+json. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export function validationFailed(errors: FieldError[]): AppError {
  const fields = errors.length === 1 ? `${errors[0].pointer || 'the body'}` : `${errors.length} fields`;
  return new AppError('validation_failed', `The request has invalid input in ${fields}.`, { errors });
}
