import { Injectable } from '@nestjs/common';
import { validateSync } from 'class-validator';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { validationFailed } from '../problem/app-error.js';
import { FieldError, FieldErrorCode } from '../problem/error-catalog.js';
import { escapePointer } from '../body/strict-json.js';
import { LeadInput } from './lead.dto.js';
import {
  EMAIL_LOCAL_PART_MAX_OCTETS,
  fieldFailure,
  LEAD_FIELD_NAMES,
  LEAD_FIELDS,
  LeadField,
  LeadFieldRule,
  NormalisedLead,
  normaliseEmail,
} from './lead-rules.js';

function describe(code: FieldErrorCode, field: LeadField, rule: LeadFieldRule): string {
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
    default:
      return field === 'email'
        ? `email must be an address with one @, a local part of at most ${EMAIL_LOCAL_PART_MAX_OCTETS} bytes and a dotted domain name (not an IP address), like nome@empresa.com.br.`
        : `${field} must have at least 8 digits and may contain only digits, spaces and + - ( ) . characters.`;
  }
}

/** The one validation and normalisation path for a lead, shared by lead, sandbox and every other surface. */
@Injectable()
export class LeadValidationService {
  validate(body: Record<string, unknown>): NormalisedLead {
    const errors: FieldError[] = [];
    for (const key of Object.keys(body)) {
      // Own keys only: a plain lookup would take toString, constructor or __proto__ for lead fields (inherited from Object).
      if (!Object.hasOwn(LEAD_FIELDS, key)) errors.push({ pointer: `/${escapePointer(key)}`, code: 'unknown_field', detail: `${key} is not a lead field.` });
    }
    const input = new LeadInput();
    for (const name of LEAD_FIELD_NAMES) input[name] = body[name];
    for (const failure of validateSync(input)) {
      const field = failure.property as LeadField;
      const code = fieldFailure(field, body[field])!;
      errors.push({ pointer: `/${field}`, code, detail: describe(code, field, LEAD_FIELDS[field]) });
    }
    if (errors.length) throw validationFailed(sortByPointer(errors));
    return normalise(input as Record<LeadField, string | undefined>);
  }
}

function sortByPointer(errors: FieldError[]): FieldError[] {
  const order = (pointer: string) => {
    const index = LEAD_FIELD_NAMES.indexOf(pointer.slice(1) as LeadField);
    return index === -1 ? LEAD_FIELD_NAMES.length : index;
  };
  return errors.sort((a, b) => order(a.pointer) - order(b.pointer));
}

function normalise(input: Record<LeadField, string | undefined>): NormalisedLead {
  const clean = (field: LeadField): string | undefined => {
    const value = input[field];
    if (value === undefined) return undefined;
    const text = value.trim().normalize('NFC');
    return (LEAD_FIELDS[field] as LeadFieldRule).collapseWhitespace ? text.replace(/\s+/gu, ' ') : text;
  };
  const lead: NormalisedLead = { nome: clean('nome')!, email: normaliseEmail(input.email!) };
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
