import { ERROR_CATALOG, ErrorCode, MAX_FIELD_ERRORS, ProblemError } from './error-catalog.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  hint: string;
  instance: string;
  request_id: string;
  errors?: ProblemError[];
  [extension: string]: unknown;
}

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

export function errorTypeUri(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs/errors#${code}`;
}

/** Builds an RFC 9457 body for a catalog code; `status` always equals the HTTP status. */
export function buildProblem(
  baseUrl: string,
  code: ErrorCode,
  detail: string,
  context: { instance: string; requestId: string; errors?: ProblemError[]; extensions?: Record<string, unknown> },
): Problem {
  const entry = ERROR_CATALOG[code];
  const problem: Problem = {
    ...context.extensions,
    type: errorTypeUri(baseUrl, code),
    title: entry.title,
    status: entry.status,
    detail,
    code,
    hint: entry.hint,
    instance: context.instance,
    request_id: context.requestId,
  };
  if (context.errors?.length) problem.errors = context.errors.slice(0, MAX_FIELD_ERRORS);
  return problem;
}
