import { escapePointer } from '../body/strict-json.js';
import { fieldFailure, foldEmail, normaliseEmail } from '../leads/lead-rules.js';
import { validationFailed } from '../problem/app-error.js';
import type { FieldError } from '../problem/error-catalog.js';
import type { RecipientLanguage, RecipientMode } from './notification-recipient.entity.js';
import type { RecipientChanges } from './notification-recipients.store.js';

const MODES: readonly RecipientMode[] = ['immediate', 'daily_digest'];
const LANGUAGES: readonly RecipientLanguage[] = ['pt-BR', 'en'];

export interface RecipientInput extends Required<RecipientChanges> {
  email: string;
  emailFolded: string;
}

const EMAIL_DETAILS: Record<string, string> = {
  required: 'email is required: the address to tell of new leads.',
  invalid_type: 'email must be a string.',
  invalid_characters: 'email contains control or bidirectional characters.',
  too_short: 'email must have at least 3 characters.',
  too_long: 'email must have at most 254 characters.',
  invalid_format: 'email must be an e-mail address with one @ and a dotted domain.',
};

/** POST /api/v1/notification-recipients: `email` and `mode` required; `language` pt-BR and `include_personal_data` true by default. */
export function parseRecipientCreate(body: Record<string, unknown>): RecipientInput {
  const errors = unknownFields(body, ['email', 'mode', 'language', 'include_personal_data']);
  let email = '';
  // The lead's own rule for an address (lead-rules.ts): one way to say what an address is.
  const failure = fieldFailure('email', body.email);
  if (failure) errors.push({ pointer: '/email', code: failure, detail: EMAIL_DETAILS[failure] ?? 'email is not an e-mail address.' });
  else email = normaliseEmail(body.email as string);
  if (body.mode === undefined) errors.push({ pointer: '/mode', code: 'required', detail: 'mode is required: "immediate" or "daily_digest".' });
  const changes = parseChanges(body, errors);
  if (errors.length) throw validationFailed(errors);
  return {
    email,
    emailFolded: foldEmail(email),
    mode: changes.mode!,
    language: changes.language ?? 'pt-BR',
    includePersonalData: changes.includePersonalData ?? true,
  };
}

/** PATCH /api/v1/notification-recipients/{id}: any of `mode`, `language`, `include_personal_data`; at least one. */
export function parseRecipientPatch(body: Record<string, unknown>): RecipientChanges {
  if (Object.keys(body).length === 0) {
    throw validationFailed([{ pointer: '', code: 'empty_patch', detail: 'Send at least one of mode, language and include_personal_data.' }]);
  }
  const errors = unknownFields(body, ['mode', 'language', 'include_personal_data']);
  const changes = parseChanges(body, errors);
  if (errors.length) throw validationFailed(errors);
  return changes;
}

function unknownFields(body: Record<string, unknown>, fields: string[]): FieldError[] {
  return Object.keys(body)
    .filter((key) => !fields.includes(key))
    .map((key) => ({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a field of a notification recipient.` }));
}

function parseChanges(body: Record<string, unknown>, errors: FieldError[]): RecipientChanges {
  const changes: RecipientChanges = {};
  const oneOf = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = body[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') errors.push({ pointer: `/${name}`, code: 'invalid_type', detail: `${name} must be a string.` });
    else if (!(allowed as readonly string[]).includes(value))
      errors.push({ pointer: `/${name}`, code: 'invalid_value', detail: `${name} must be ${allowed.map((a) => `"${a}"`).join(' or ')}.` });
    else return value as T;
    return undefined;
  };
  changes.mode = oneOf('mode', MODES);
  changes.language = oneOf('language', LANGUAGES);
  if (body.include_personal_data !== undefined) {
    if (typeof body.include_personal_data !== 'boolean') {
      errors.push({ pointer: '/include_personal_data', code: 'invalid_type', detail: 'include_personal_data must be true or false.' });
    } else changes.includePersonalData = body.include_personal_data;
  }
  return changes;
}
