/**
 * The lead field rules of decisions.md §2, in one place. openapi/openapi-leads.yaml states the same rules as JSON Schema
 * patterns; lead-contract.spec.ts beside this file proves both accept and reject the same inputs.
 */

/** Characters never accepted in a single-line field: controls, lone surrogates, noncharacters, bidi controls. */
const FORBIDDEN = String.raw`\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069`;
/** The same for multi-line text, which keeps tab, line feed and carriage return. */
const FORBIDDEN_MULTILINE = String.raw`\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\p{Cs}\p{Noncharacter_Code_Point}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069`;

export const FORBIDDEN_CHARACTER = new RegExp(`[${FORBIDDEN}]`, 'u');
export const FORBIDDEN_MULTILINE_CHARACTER = new RegExp(`[${FORBIDDEN_MULTILINE}]`, 'u');

const EMAIL_LOCAL = String.raw`[\p{L}\p{M}\p{N}!#$%&'*+/=?^_` + '`' + String.raw`{|}~-]+`;
const DOMAIN_LABEL = String.raw`[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?`;
/** One @, a dot-atom local part, and a domain of at least two labels; whitespace around it is trimmed. */
export const EMAIL_FORMAT = new RegExp(String.raw`^\s*${EMAIL_LOCAL}(?:\.${EMAIL_LOCAL})*@(?:${DOMAIN_LABEL}\.)+${DOMAIN_LABEL}\s*$`, 'u');
/** Digits and + - ( ) . space. */
export const TELEFONE_FORMAT = /^\s*[0-9+\-(). ]*\s*$/u;

export interface LeadFieldRule {
  required: boolean;
  /** Bounds in code points, measured after trimming. */
  min: number;
  max: number;
  multiline?: boolean;
  /** Inner runs of whitespace become one space. */
  collapseWhitespace?: boolean;
  format?: RegExp;
}

export const LEAD_FIELDS = {
  nome: { required: true, min: 1, max: 120, collapseWhitespace: true },
  email: { required: true, min: 3, max: 254, format: EMAIL_FORMAT },
  telefone: { required: false, min: 8, max: 32, format: TELEFONE_FORMAT },
  empresa: { required: false, min: 1, max: 120, collapseWhitespace: true },
  mensagem: { required: false, min: 1, max: 5000, multiline: true },
  origem: { required: false, min: 1, max: 64 },
} as const satisfies Record<string, LeadFieldRule>;

export type LeadField = keyof typeof LEAD_FIELDS;
export const LEAD_FIELD_NAMES = Object.keys(LEAD_FIELDS) as LeadField[];

/** A lead after validation and normalisation: what is stored and what the sandbox returns. */
export interface NormalisedLead {
  nome: string;
  email: string;
  telefone?: string;
  telefone_e164?: string;
  empresa?: string;
  mensagem?: string;
  origem?: string;
}

/** Trimmed, NFC, and the domain lower-cased (the local part is the mailbox owner's business). */
export function normaliseEmail(value: string): string {
  const email = value.trim().normalize('NFC');
  const at = email.lastIndexOf('@');
  return email.slice(0, at) + email.slice(at).toLowerCase();
}

/** Why a value breaks its field's rules, the most basic reason first; undefined when it keeps them all. */
export function fieldFailure(name: LeadField, value: unknown): LeadFieldFailure | undefined {
  const rule: LeadFieldRule = LEAD_FIELDS[name];
  // null is present, and then of the wrong type.
  if (value === undefined) return rule.required ? 'required' : undefined;
  if (typeof value !== 'string') return 'invalid_type';
  const text = value.trim();
  if ((rule.multiline ? FORBIDDEN_MULTILINE_CHARACTER : FORBIDDEN_CHARACTER).test(text)) return 'invalid_characters';
  const length = codePointLength(text);
  if (length < rule.min) return 'too_short';
  if (length > rule.max) return 'too_long';
  if (rule.format && !rule.format.test(value)) return 'invalid_format';
  return undefined;
}

export type LeadFieldFailure = 'required' | 'invalid_type' | 'invalid_characters' | 'too_short' | 'too_long' | 'invalid_format';

export function codePointLength(value: string): number {
  let length = 0;
  for (const _ of value) length++;
  return length;
}
