import { validationFailed, AppError } from '../problem/app-error.js';
import { FieldError } from '../problem/error-catalog.js';
import { escapePointer } from '../body/strict-json.js';
import { codePointLength, compatibilityCharacter, compatibilityDetail, EMAIL_FORMAT, FORBIDDEN_CHARACTER, normaliseEmail } from '../leads/lead-rules.js';
import { RegistrationType } from './agent-registration.entity.js';

/** A registration, or (`refresh`) the next identity assertion of an existing one. */
export type IdentityRequest = RegistrationRequest | RefreshRequest;

export interface RefreshRequest {
  type: 'refresh';
  refreshToken: string;
}

export interface RegistrationRequest {
  type: RegistrationType;
  clientName?: string;
  contacts?: string[];
  /**
   * The self-reported e-mail of an identity_assertion (verified_email) registration, or the login hint of a
   * service_auth one (whose claim starts with the registration), domain lower-cased.
   */
  email?: string;
}

const FIELDS: Record<IdentityRequest['type'], string[]> = {
  anonymous: ['type', 'client_name', 'contacts'],
  identity_assertion: ['type', 'assertion_type', 'assertion', 'client_name', 'contacts'],
  service_auth: ['type', 'login_hint', 'client_name', 'contacts'],
  refresh: ['type', 'refresh_token'],
};
/** Longer than any refresh token this service issues; a longer value is refused before it is hashed. */
const MAX_REFRESH_TOKEN = 512;
const TYPES = '"anonymous", "identity_assertion", "service_auth" or "refresh"';
const MAX_CONTACTS = 5;
const MAX_CLIENT_NAME = 100;

/**
 * An unknown `type` is 400 unsupported_identity_type; every other shape error is 422 with pointers
 * (docs/decisions/0007-agent-registration.md).
 */
export function parseIdentityRequest(body: Record<string, unknown>): IdentityRequest {
  const type = body.type;
  if (type === undefined) throw validationFailed([{ pointer: '/type', code: 'required', detail: `type is required: ${TYPES}.` }]);
  if (typeof type !== 'string') throw validationFailed([{ pointer: '/type', code: 'invalid_type', detail: 'type must be a string.' }]);
  if (!Object.hasOwn(FIELDS, type)) {
    throw new AppError('unsupported_identity_type', `The identity type "${type.slice(0, 40)}" is not supported; use ${TYPES}.`);
  }
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => !FIELDS[type as IdentityRequest['type']].includes(key))
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a ${type} request.` }));
  if (type === 'refresh') return refreshRequest(body, errors);
  const request: RegistrationRequest = { type: type as RegistrationType };

  if (body.client_name !== undefined) {
    const name = body.client_name;
    if (typeof name !== 'string') errors.push({ pointer: '/client_name', code: 'invalid_type', detail: 'client_name must be a string.' });
    else if (FORBIDDEN_CHARACTER.test(name.trim()))
      errors.push({ pointer: '/client_name', code: 'invalid_characters', detail: 'client_name contains control or bidirectional characters.' });
    else if (!name.trim()) errors.push({ pointer: '/client_name', code: 'too_short', detail: 'client_name must not be empty.' });
    else if (codePointLength(name.trim()) > MAX_CLIENT_NAME)
      errors.push({ pointer: '/client_name', code: 'too_long', detail: `client_name must have at most ${MAX_CLIENT_NAME} characters.` });
    else request.clientName = name.trim().normalize('NFC');
  }

  if (body.contacts !== undefined) {
    const contacts = body.contacts;
    if (!Array.isArray(contacts)) errors.push({ pointer: '/contacts', code: 'invalid_type', detail: 'contacts must be an array of e-mail addresses.' });
    else if (contacts.length > MAX_CONTACTS)
      errors.push({ pointer: '/contacts', code: 'too_many_items', detail: `contacts may list at most ${MAX_CONTACTS} addresses.` });
    else {
      const parsed = contacts.map((contact, index) => email(contact, `/contacts/${index}`, errors));
      if (parsed.every((c): c is string => c !== undefined)) request.contacts = parsed;
    }
  }

  if (type === 'identity_assertion') {
    if (body.assertion_type === undefined)
      errors.push({ pointer: '/assertion_type', code: 'required', detail: 'assertion_type is required: "verified_email".' });
    else if (body.assertion_type !== 'verified_email')
      errors.push({ pointer: '/assertion_type', code: 'invalid_format', detail: 'The only supported assertion_type is "verified_email".' });
    if (body.assertion === undefined) errors.push({ pointer: '/assertion', code: 'required', detail: 'assertion is required: the e-mail address.' });
    else request.email = email(body.assertion, '/assertion', errors);
  }
  if (type === 'service_auth') {
    if (body.login_hint === undefined) errors.push({ pointer: '/login_hint', code: 'required', detail: "login_hint is required: the owner's e-mail address." });
    else request.email = email(body.login_hint, '/login_hint', errors);
  }
  if (errors.length) throw validationFailed(errors);
  return request;
}

/** The start of a claim (POST /api/v1/agent/identity/claim): the claim body is a union on `type`; `login_hint` is the only one. */
export interface ClaimStart {
  claimToken: string;
  /** The owner's address; absent for an identity_assertion registration, whose asserted address is its login hint. */
  loginHint?: string;
}

const MAX_CLAIM_TOKEN = 200;

export function parseClaimStart(body: Record<string, unknown>): ClaimStart {
  if (body.type === undefined) throw validationFailed([{ pointer: '/type', code: 'required', detail: 'type is required: "login_hint".' }]);
  if (body.type !== 'login_hint') {
    throw new AppError('unsupported_identity_type', `The claim type "${String(body.type).slice(0, 40)}" is not supported; use "login_hint".`);
  }
  const errors: FieldError[] = Object.keys(body)
    .filter((key) => !['type', 'claim_token', 'login_hint'].includes(key))
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a claim.` }));
  const token = body.claim_token;
  if (token === undefined) errors.push({ pointer: '/claim_token', code: 'required', detail: 'claim_token is required: the one the registration gave.' });
  else if (typeof token !== 'string') errors.push({ pointer: '/claim_token', code: 'invalid_type', detail: 'claim_token must be a string.' });
  else if (!token || token.length > MAX_CLAIM_TOKEN)
    errors.push({ pointer: '/claim_token', code: 'invalid_format', detail: 'claim_token is not one this service gives.' });
  const loginHint = body.login_hint === undefined ? undefined : email(body.login_hint, '/login_hint', errors);
  if (errors.length) throw validationFailed(errors);
  return { claimToken: token as string, loginHint };
}

function refreshRequest(body: Record<string, unknown>, errors: FieldError[]): RefreshRequest {
  const token = body.refresh_token;
  if (token === undefined) errors.push({ pointer: '/refresh_token', code: 'required', detail: 'refresh_token is required: the one the last answer gave.' });
  else if (typeof token !== 'string') errors.push({ pointer: '/refresh_token', code: 'invalid_type', detail: 'refresh_token must be a string.' });
  else if (!token) errors.push({ pointer: '/refresh_token', code: 'too_short', detail: 'refresh_token must not be empty.' });
  else if (token.length > MAX_REFRESH_TOKEN)
    errors.push({ pointer: '/refresh_token', code: 'too_long', detail: `refresh_token must have at most ${MAX_REFRESH_TOKEN} characters.` });
  if (errors.length) throw validationFailed(errors);
  return { type: 'refresh', refreshToken: token as string };
}

/** The lead e-mail rule, with the same normalisation: trimmed, NFC, domain lower-cased. */
function email(value: unknown, pointer: string, errors: FieldError[]): string | undefined {
  if (typeof value !== 'string') {
    errors.push({ pointer, code: 'invalid_type', detail: 'An e-mail address must be a string.' });
    return undefined;
  }
  // Before NFC, which turns the Kelvin sign into K.
  const variant = compatibilityCharacter(value.trim());
  if (variant !== undefined) {
    errors.push({ pointer, code: 'invalid_format', detail: compatibilityDetail('An e-mail address', variant) });
    return undefined;
  }
  const trimmed = value.trim().normalize('NFC');
  const length = codePointLength(trimmed);
  if (FORBIDDEN_CHARACTER.test(trimmed) || length < 3 || length > 254 || !EMAIL_FORMAT.test(trimmed)) {
    errors.push({ pointer, code: 'invalid_format', detail: 'Expected an e-mail address with one @ and a dotted domain.' });
    return undefined;
  }
  return normaliseEmail(trimmed);
}
