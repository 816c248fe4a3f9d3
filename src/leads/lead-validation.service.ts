import { Injectable } from '@nestjs/common';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { validationFailed } from '../problem/app-error.js';
import { FieldError, FieldErrorCode } from '../problem/error-catalog.js';
import { escapePointer } from '../body/strict-json.js';
import type { NormalisedLead } from './normalised-lead.js';
import { CONTEXT_MEMBERS, CONTEXT_TEXT_MAX, CONTEXT_URL_MAX, CONTEXT_URL_MEMBERS, ContextMember, contextValue, LeadContext } from './lead-context.js';
import {
  CONSENT_TEXT_MAX,
  LEGAL_BASIS_CATEGORIES,
  LEGAL_BASIS_MEMBERS,
  LEGAL_BASIS_STATUSES,
  LEGAL_BASIS_TYPES,
  LegalBasisInput,
  MAX_LEGAL_BASES,
} from './legal-bases.js';
import {
  codePointLength,
  compatibilityCharacter,
  compatibilityDetail,
  CONSENT_INVISIBLE_CHARACTER,
  CONSENT_MARK_RUN,
  CONSENT_MAX_MARKS,
  EMAIL_LOCAL_PART_MAX_OCTETS,
  FORBIDDEN_MULTILINE_CHARACTER,
  fieldFailure,
  LEAD_FIELD_NAMES,
  LEAD_FIELDS,
  LeadField,
  LeadFieldRule,
  normaliseField,
  VISIBLE_CHARACTER,
} from './lead-rules.js';

/** The members a lead body may hold beyond its six fields, in the order their errors are reported. */
const EXTRA_MEMBERS = ['legal_bases', 'consent_text', 'context'] as const;
const MEMBER_ORDER: readonly string[] = [...LEAD_FIELD_NAMES, ...EXTRA_MEMBERS];

function describe(code: FieldErrorCode, field: LeadField, rule: LeadFieldRule, value: string): string {
  switch (code) {
    case 'required':
      return `${field} is required.`;
    case 'invalid_type':
      return `${field} must be a string.`;
    case 'invalid_characters':
      return `${field} contains control, bidirectional-override or other invisible characters that are not allowed.`;
    case 'too_short':
      return rule.min === 1
        ? `${field} must not be blank: it needs at least one visible character.`
        : `${field} must have at least ${rule.min} characters after trimming, and a visible one among them.`;
    case 'too_long':
      return `${field} must have at most ${rule.max} characters after trimming.`;
    default: {
      const variant = field === 'email' ? compatibilityCharacter(value.trim()) : undefined;
      if (variant !== undefined) return compatibilityDetail('email', variant);
      return field === 'email'
        ? `email must be an address with one @, a local part of at most ${EMAIL_LOCAL_PART_MAX_OCTETS} bytes and a dotted domain name (not an IP address), like nome@empresa.com.br.`
        : `${field} must have at least 8 digits and may contain only digits, spaces and + - ( ) . characters.`;
    }
  }
}

/** The one validation and normalisation path for a lead, shared by lead, sandbox and every other surface. */
@Injectable()
export class LeadValidationService {
  validate(body: Record<string, unknown>): NormalisedLead {
    const errors: FieldError[] = [];
    for (const key of Object.keys(body)) {
      // An array's includes(), not a lookup: a plain object would take toString, constructor or __proto__ for members.
      if (!MEMBER_ORDER.includes(key)) errors.push({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a lead field.` });
    }
    // fieldFailure straight, not through a class-validator DTO that called it once per field anyway: validateSync
    // cost ~4.5 µs a lead alone and GC besides; without it (and with nfc()'s ASCII path, ~1 µs) a lead took 6–13% less
    // CPU, median 11% (6 A/B runs, both builds at once on CPU 0, load 4.8–6.5, 2026-11-27; lead-validation.service.spec.ts).
    for (const field of LEAD_FIELD_NAMES) {
      const code = fieldFailure(field, body[field]);
      if (code) errors.push({ pointer: `/${field}`, code, detail: describe(code, field, LEAD_FIELDS[field], body[field] as string) });
    }
    const legalBases = body.legal_bases === undefined ? undefined : checkLegalBases(body.legal_bases, errors);
    // A wording needs a consent entry: none when legal_bases is absent; unknown when it is malformed (reported already).
    const bases = body.legal_bases === undefined ? [] : legalBases;
    const consentText = body.consent_text === undefined ? undefined : checkConsentText(body.consent_text, bases, errors);
    const context = body.context === undefined ? undefined : checkContext(body.context, errors);
    if (errors.length) throw validationFailed(sortByPointer(errors));
    const lead = normalise(body as Record<LeadField, string | undefined>);
    if (legalBases?.length) lead.legal_bases = legalBases;
    if (consentText !== undefined) lead.consent_text = consentText;
    if (context && Object.keys(context).length > 0) lead.context = context;
    return lead;
  }
}

/** By member, in MEMBER_ORDER (unknown members last); a member's own errors keep the order they were found in. */
function sortByPointer(errors: FieldError[]): FieldError[] {
  const order = (pointer: string) => {
    const end = pointer.indexOf('/', 1);
    const index = MEMBER_ORDER.indexOf(pointer.slice(1, end === -1 ? undefined : end));
    return index === -1 ? MEMBER_ORDER.length : index;
  };
  return errors.sort((a, b) => order(a.pointer) - order(b.pointer));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkLegalBases(value: unknown, errors: FieldError[]): LegalBasisInput[] | undefined {
  if (!Array.isArray(value)) {
    errors.push({ pointer: '/legal_bases', code: 'invalid_type', detail: 'legal_bases must be an array of {category, type, status} objects.' });
    return undefined;
  }
  if (value.length > MAX_LEGAL_BASES) {
    errors.push({ pointer: '/legal_bases', code: 'too_many_items', detail: `legal_bases holds at most ${MAX_LEGAL_BASES} entries.` });
    return undefined;
  }
  const allowed: Record<(typeof LEGAL_BASIS_MEMBERS)[number], readonly string[]> = {
    category: LEGAL_BASIS_CATEGORIES,
    type: LEGAL_BASIS_TYPES,
    status: LEGAL_BASIS_STATUSES,
  };
  const before = errors.length;
  const seen = new Set<unknown>();
  value.forEach((entry: unknown, index) => {
    const at = `/legal_bases/${index}`;
    if (!isObject(entry)) {
      errors.push({ pointer: at, code: 'invalid_type', detail: `legal_bases/${index} must be an object with category, type and status.` });
      return;
    }
    for (const key of Object.keys(entry)) {
      if (!(LEGAL_BASIS_MEMBERS as readonly string[]).includes(key)) {
        errors.push({ pointer: `${at}/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a member of a legal basis.` });
      }
    }
    for (const member of LEGAL_BASIS_MEMBERS) {
      const given = entry[member];
      const pointer = `${at}/${member}`;
      if (given === undefined) errors.push({ pointer, code: 'required', detail: `${member} is required in every legal basis.` });
      else if (typeof given !== 'string') errors.push({ pointer, code: 'invalid_type', detail: `${member} must be a string.` });
      else if (!allowed[member].includes(given))
        errors.push({ pointer, code: 'invalid_value', detail: `${member} must be one of: ${allowed[member].join(', ')}.` });
    }
    if (seen.has(entry.category)) {
      errors.push({ pointer: `${at}/category`, code: 'duplicate', detail: 'Each category may appear once in legal_bases.' });
    }
    seen.add(entry.category);
  });
  return errors.length > before ? undefined : (value as LegalBasisInput[]).map(({ category, type, status }) => ({ category, type, status }));
}

/** The wording follows mensagem's rules (line breaks and tabs kept); it only means something beside a consent entry. */
function checkConsentText(value: unknown, legalBases: LegalBasisInput[] | undefined, errors: FieldError[]): string | undefined {
  const fail = (code: FieldErrorCode, detail: string) => void errors.push({ pointer: '/consent_text', code, detail });
  if (typeof value !== 'string') return fail('invalid_type', 'consent_text must be a string.');
  const text = value.trim();
  if (FORBIDDEN_MULTILINE_CHARACTER.test(text))
    return fail('invalid_characters', 'consent_text contains control, bidirectional-override or other invisible characters that are not allowed.');
  if (text === '' || !VISIBLE_CHARACTER.test(text)) return fail('too_short', 'consent_text must not be blank.');
  // A string has at least as many UTF-16 units as code points: only a longer one needs counting.
  if (text.length > CONSENT_TEXT_MAX && codePointLength(text) > CONSENT_TEXT_MAX)
    return fail('too_long', `consent_text must have at most ${CONSENT_TEXT_MAX} characters after trimming.`);
  // Two wordings that look alike must hash alike: no invisible characters, no pile of marks on one character.
  if (CONSENT_INVISIBLE_CHARACTER.test(text))
    return fail(
      'invalid_characters',
      'consent_text contains an invisible character (a zero-width space or joiner, a word joiner, U+FEFF, a soft hyphen or another format character): it would make two wordings that look the same count as different. Remove it.',
    );
  const nfc = text.normalize('NFC');
  if (CONSENT_MARK_RUN.test(nfc))
    return fail(
      'invalid_characters',
      `consent_text has a character with more than ${CONSENT_MAX_MARKS} combining marks (accents) on it: such a pile looks like fewer marks, so two wordings that look the same would count as different.`,
    );
  if (legalBases && !legalBases.some((basis) => basis.type === 'consent')) {
    return fail('invalid_value', 'consent_text is the wording of a consent: send it with a legal_bases entry of type consent.');
  }
  return nfc;
}

function checkContext(value: unknown, errors: FieldError[]): LeadContext | undefined {
  if (!isObject(value)) {
    errors.push({ pointer: '/context', code: 'invalid_type', detail: `context must be an object with string members: ${CONTEXT_MEMBERS.join(', ')}.` });
    return undefined;
  }
  const context: LeadContext = {};
  for (const key of Object.keys(value)) {
    if (!(CONTEXT_MEMBERS as readonly string[]).includes(key)) {
      errors.push({ pointer: `/context/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a context member.` });
      continue;
    }
    const member = key as ContextMember;
    const result = contextValue(member, value[member]);
    if ('value' in result) context[member] = result.value;
    else errors.push({ pointer: `/context/${member}`, code: result.failure, detail: contextDetail(member, result.failure) });
  }
  return context;
}

function contextDetail(member: ContextMember, failure: FieldErrorCode): string {
  const url = CONTEXT_URL_MEMBERS.has(member);
  switch (failure) {
    case 'invalid_type':
      return `context.${member} must be a string.`;
    case 'invalid_characters':
      return `context.${member} contains control, bidirectional-override or other invisible characters that are not allowed.`;
    case 'too_short':
      return `context.${member} must not be blank; leave it out instead.`;
    case 'too_long':
      return url
        ? `context.${member} must have at most ${CONTEXT_URL_MAX} characters after trimming, and again once stored: without query and fragment, with its non-ASCII characters percent-encoded (up to 12 characters each).`
        : `context.${member} must have at most ${CONTEXT_TEXT_MAX} characters after trimming.`;
    case 'scheme_not_allowed':
      return `context.${member} must be an http or https URL.`;
    default:
      return `context.${member} must be an absolute URL, like https://www.exemplo.com.br/contato.`;
  }
}

function normalise(input: Record<LeadField, string | undefined>): NormalisedLead {
  const clean = (field: LeadField): string | undefined => (input[field] === undefined ? undefined : normaliseField(field, input[field]));
  const lead: NormalisedLead = { nome: clean('nome')!, email: clean('email')! };
  const telefone = clean('telefone');
  if (telefone !== undefined) {
    lead.telefone = telefone;
    const phone = parsePhoneNumberFromString(telefone, 'BR');
    if (phone?.isValid()) lead.telefone_e164 = phone.number;
  }
  for (const field of ['empresa', 'mensagem', 'origem'] as const) {
    const value = clean(field);
    if (value !== undefined) lead[field] = value;
  }
  return lead;
}
