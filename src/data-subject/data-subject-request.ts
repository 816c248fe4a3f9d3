import { escapePointer } from '../body/strict-json.js';
import { compatibilityCharacter, compatibilityDetail, fieldFailure, foldEmail, normaliseEmail } from '../leads/lead-rules.js';
import { validationFailed } from '../problem/app-error.js';
import type { FieldError } from '../problem/error-catalog.js';

const DETAIL: Record<string, string> = {
  required: 'email is required: the address of the person whose leads this request is about.',
  invalid_type: 'email must be a string.',
  invalid_characters: 'email contains control, bidirectional-override or other invisible characters that are not allowed.',
  too_short: 'email must not be blank.',
  too_long: 'email is longer than any address a lead may have.',
  invalid_format: 'email must be an address as a lead would have it, like nome@empresa.com.br.',
};

/**
 * The body of every data-subject request: `{"email"}` and nothing else, the address checked by the lead rules and
 * returned case-folded as the leads' `email_folded` holds it.
 */
export function parseSubject(body: Record<string, unknown>): string {
  return parse(body, ['email']).email;
}

/** An access request's body: `{"email"}`, and `cursor` (the `next_cursor` of the page before) for every page after the first. */
export function parseAccess(body: Record<string, unknown>): { email: string; cursor?: string } {
  const { email } = parse(body, ['email', 'cursor']);
  return { email, cursor: body.cursor as string | undefined };
}

/** An erasure request's body: `{"email"}`, and `dry_run` (true: count what would be erased, erase nothing). */
export function parseErasure(body: Record<string, unknown>): { email: string; dryRun: boolean } {
  return parse(body, ['email', 'dry_run']);
}

/** The types of request a person can make on their own (POST /api/v1/privacy/requests). */
export const PRIVACY_REQUEST_TYPES = ['access', 'erasure', 'consent_revocation'] as const;
export type PrivacyRequestType = (typeof PRIVACY_REQUEST_TYPES)[number];

/**
 * A person's own request: `{"type", "email"}`, and `language` (`pt-BR` or `en`) for the code's e-mail. `address` is
 * the address the code goes to, `email` the folded form that finds the leads.
 */
export function parsePrivacyRequest(body: Record<string, unknown>): { type: PrivacyRequestType; email: string; address: string; language?: 'pt-BR' | 'en' } {
  const extra: FieldError[] = [];
  if (!PRIVACY_REQUEST_TYPES.includes(body.type as PrivacyRequestType)) {
    extra.push({
      pointer: '/type',
      code: body.type === undefined ? 'required' : 'invalid_value',
      detail: 'type must be access (a copy of your data), erasure (erase it) or consent_revocation (no more communications).',
    });
  }
  if (body.language !== undefined && body.language !== 'pt-BR' && body.language !== 'en') {
    extra.push({ pointer: '/language', code: 'invalid_value', detail: 'language must be pt-BR or en: the language of the e-mail with the code.' });
  }
  const { email } = parse(body, ['type', 'email', 'language'], extra);
  return {
    type: body.type as PrivacyRequestType,
    email,
    address: normaliseEmail(body.email as string),
    language: body.language as 'pt-BR' | 'en' | undefined,
  };
}

/** The body that verifies a person's request: `{"code"}`, as the e-mail gave it. */
export function parseVerification(body: Record<string, unknown>): string {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => key !== 'code')
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a member of a verification.` }));
  if (typeof body.code !== 'string') {
    errors.push({
      pointer: '/code',
      code: body.code === undefined ? 'required' : 'invalid_type',
      detail: 'code must be the six digits of the e-mail, as a string.',
    });
  } else if (body.code.length > 32) errors.push({ pointer: '/code', code: 'too_long', detail: 'code is the six digits of the e-mail.' });
  if (errors.length) throw validationFailed(errors);
  return body.code as string;
}

function parse(body: Record<string, unknown>, members: string[], extra: FieldError[] = []): { email: string; dryRun: boolean } {
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => !members.includes(key))
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a member of a data-subject request.` }));
  const failure = fieldFailure('email', body.email);
  const variant = failure === 'invalid_format' ? compatibilityCharacter((body.email as string).trim()) : undefined;
  if (failure) errors.push({ pointer: '/email', code: failure, detail: variant ? compatibilityDetail('email', variant) : DETAIL[failure] });
  if (body.dry_run !== undefined && typeof body.dry_run !== 'boolean' && members.includes('dry_run')) {
    errors.push({ pointer: '/dry_run', code: 'invalid_type', detail: 'dry_run must be true (count what would be erased) or false.' });
  }
  if (body.cursor !== undefined && typeof body.cursor !== 'string' && members.includes('cursor')) {
    errors.push({
      pointer: '/cursor',
      code: 'invalid_type',
      detail: 'cursor must be the next_cursor string of the page before; leave it out for the first page.',
    });
  }
  errors.push(...extra);
  if (errors.length) throw validationFailed(errors);
  return { email: foldEmail(normaliseEmail(body.email as string)), dryRun: body.dry_run === true };
}

/** An address as the queue shows it: its first character and its domain (`t***@pessoa.com.br`). */
export function maskAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return `${Array.from(email.slice(0, at))[0] ?? ''}***${email.slice(at)}`;
}
