/**
 * The lead field rules (docs/decisions/0002-lead-fields-and-normalisation.md), in one place. openapi/leads/schemas.yaml
 * states the same rules as JSON Schema patterns (and x-local-part-max-octets); lead-contract.spec.ts beside this file
 * proves both accept and reject the same inputs, and linear-patterns.spec.ts that no pattern on either side backtracks
 * super-linearly.
 */

/**
 * Characters never accepted in a single-line field: controls, lone surrogates, noncharacters, bidi controls, and the
 * Unicode tag characters (invisible, they can carry instructions to language-model agents that read leads).
 */
const FORBIDDEN = String.raw`\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}`;
/** The same for multi-line text, which keeps tab, line feed and carriage return. */
const FORBIDDEN_MULTILINE = String.raw`\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\p{Cs}\p{Noncharacter_Code_Point}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}`;

export const FORBIDDEN_CHARACTER = new RegExp(`[${FORBIDDEN}]`, 'u');
export const FORBIDDEN_MULTILINE_CHARACTER = new RegExp(`[${FORBIDDEN_MULTILINE}]`, 'u');

/**
 * Characters that render as nothing: whitespace, format characters (Cf), combining marks (a value of marks alone has no
 * base to put them on), default-ignorable code points (Hangul fillers, variation selectors, U+034F) and the blank-looking
 * U+2800 and U+FFFC. A value needs at least one character outside this set.
 */
const BLANK = String.raw`\s\p{Cf}\p{M}\p{Default_Ignorable_Code_Point}\u2800\uFFFC`;
export const VISIBLE_CHARACTER = new RegExp(`[^${BLANK}]`, 'u');

/**
 * A consent wording is hashed to name it (legal-bases.ts), so two that look the same must be the same text. It may hold
 * no invisible character: format characters (ZWSP U+200B, U+2060, U+FEFF inside the text, the soft hyphen, bidi
 * controls) and the other default-ignorable code points (Hangul fillers, U+180E), except ZWNJ and ZWJ where they change
 * what is shown: after an emoji (👩‍💻) or after a letter of a script that uses them (Arabic, Persian, Indic), not
 * Latin, Greek or Cyrillic. Variation selectors and U+034F are marks, counted by CONSENT_MARK_RUN.
 */
const JOINS_HERE = String.raw`[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]|(?![\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{sc=Zyyy}\p{sc=Zinh}])[\p{L}\p{M}]`;
export const CONSENT_INVISIBLE_CHARACTER = new RegExp(
  String.raw`(?![\u200C\u200D\p{M}])[\p{Cf}\p{Default_Ignorable_Code_Point}]|(?<!${JOINS_HERE})[\u200C\u200D]`,
  'u',
);
/** Combining marks a consent wording's character may carry (in NFC): Vietnamese needs two, Indic and Tibetan stacks a few. */
export const CONSENT_MAX_MARKS = 4;
export const CONSENT_MARK_RUN = new RegExp(String.raw`\p{M}{${CONSENT_MAX_MARKS + 1}}`, 'u');

const EMAIL_LOCAL = String.raw`[\p{L}\p{M}\p{N}!#$%&'*+/=?^_` + '`' + String.raw`{|}~-]+`;
const DOMAIN_LABEL = String.raw`[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?`;
/**
 * One @, a dot-atom local part, and a domain of at least two labels whose last one has a letter (so no IP literal:
 * a@1.2.3.4; a@[1.2.3.4] and a@[IPv6:...] have no place in the character classes). Tested on the trimmed value.
 */
export const EMAIL_FORMAT = new RegExp(String.raw`^${EMAIL_LOCAL}(?:\.${EMAIL_LOCAL})*@(?:${DOMAIN_LABEL}\.)+(?=[\p{M}\p{N}-]*\p{L})${DOMAIN_LABEL}$`, 'u');
/** RFC 5321 §4.5.3.1.1, counted in UTF-8 octets as RFC 6531 sends them. */
export const EMAIL_LOCAL_PART_MAX_OCTETS = 64;
/**
 * At least 8 digits, with + - ( ) . and spaces around them. Tested on the trimmed value; the separators and the digit
 * are disjoint classes, so there is only ever one way to match and the cost is linear.
 */
export const TELEFONE_FORMAT = /^[+\-(). ]*(?:\d[+\-(). ]*){8,}$/u;

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

/**
 * The lead fields: the one list that the validator, the CLI (cli/, which bundles this file) and the form script (the
 * service writes the names into it as it serves it: src/forms/forms.script.ts) all read.
 */
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
export const REQUIRED_LEAD_FIELDS = LEAD_FIELD_NAMES.filter((name) => LEAD_FIELDS[name].required);

/** Trimmed, NFC, and the domain lower-cased (the local part is the mailbox owner's business). */
export function normaliseEmail(value: string): string {
  const email = nfc(value.trim());
  const at = email.lastIndexOf('@');
  return email.slice(0, at) + email.slice(at).toLowerCase();
}

/**
 * A field's value as the service stores it: trimmed, NFC, inner whitespace collapsed where the rule says, and the
 * e-mail's domain lower-cased. `leads import --dedupe` compares rows with stored leads in this form.
 */
export function normaliseField(name: LeadField, value: string): string {
  if (name === 'email') return normaliseEmail(value);
  const text = nfc(value.trim());
  return (LEAD_FIELDS[name] as LeadFieldRule).collapseWhitespace ? text.replace(/\s+/gu, ' ') : text;
}

/**
 * The case-insensitive form of an address: stored beside it (`email_folded`, indexed) and applied to the read API's
 * `email` filter, so both sides fold alike. NFC, then JavaScript's full Unicode lower-casing (SQLite's lower() folds
 * ASCII only). migrations/1764300000000-lead-read-columns.ts holds a copy for the rows stored before it.
 *
 * An address with a compatibility character (refused since issue 32; only a lead or registration stored before can
 * hold one) folds to itself, its domain lower-cased as the service stores it: lower-casing would make U+03F4 ϴ the θ
 * of another person's address, so such an address matches only itself. migrations/1764850000000-compatibility-
 * addresses.ts holds a copy for the rows stored before.
 */
export function foldEmail(email: string): string {
  const normalised = nfc(email);
  if (compatibilityCharacter(normalised) === undefined) return normalised.toLowerCase();
  const at = normalised.lastIndexOf('@');
  return normalised.slice(0, at) + normalised.slice(at).toLowerCase();
}

/**
 * Any character outside ASCII. ASCII text is its own NFC and NFKC, so it skips the Unicode work: a lead's fields and
 * address took ~1 µs less (lead-rules.spec.ts fails if a Unicode or ICU update ever makes that untrue).
 */
const NON_ASCII = /[\u0080-\uFFFF]/;

/** NFC, without calling into ICU for ASCII text (its own NFC). */
export function nfc(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFC') : text;
}

/**
 * The first character of `text` that Unicode normalisation (NFKC) replaces with another, or undefined: the fullwidth
 * ｋ, the ligature ﬁ, the long s ſ, superscripts, and the characters NFC itself replaces, like U+212A KELVIN SIGN
 * (which becomes K). An address written with one looks like, and folds into, another person's address
 * (`Kate@…` with the Kelvin sign is `kate@…`), so every surface refuses it (docs/decisions/0002-lead-fields-and-normalisation.md).
 * Per character, so the rule of issue 32 (NFKC differs from NFC) holds and the canonical singletons NFC hides are caught.
 */
export function compatibilityCharacter(text: string): string | undefined {
  if (!NON_ASCII.test(text)) return undefined;
  for (const character of text) if (character.normalize('NFKC') !== character) return character;
  return undefined;
}

/** Why an address with a compatibility character is refused, in plain words, for a problem's detail. */
export function compatibilityDetail(name: string, character: string): string {
  const code = `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const plain = character.normalize('NFKC');
  return `${name} contains "${character}" (${code}), a variant form of "${plain}": an address written with it looks like another person's address. Write "${plain}" instead.`;
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
  if (length < rule.min || !visible(text)) return 'too_short';
  if (length > rule.max) return 'too_long';
  // Bounds first: a format pattern only ever sees trimmed text within the field's bound.
  if (rule.format && !rule.format.test(text)) return 'invalid_format';
  if (name === 'email' && (localPartTooLong(text) || compatibilityCharacter(text) !== undefined)) return 'invalid_format';
  return undefined;
}

/** Trimmed text that starts with printable ASCII has a visible character; only other text needs the regex. */
function visible(text: string): boolean {
  const first = text.charCodeAt(0);
  return (first > 0x20 && first < 0x7f) || VISIBLE_CHARACTER.test(text);
}

/** UTF-8 takes at most 3 bytes per UTF-16 unit, so a local part of 21 units or fewer needs no counting. */
function localPartTooLong(email: string): boolean {
  const at = email.lastIndexOf('@');
  return at > EMAIL_LOCAL_PART_MAX_OCTETS / 3 && Buffer.byteLength(email.slice(0, at)) > EMAIL_LOCAL_PART_MAX_OCTETS;
}

export type LeadFieldFailure = 'required' | 'invalid_type' | 'invalid_characters' | 'too_short' | 'too_long' | 'invalid_format';

export function codePointLength(value: string): number {
  let length = 0;
  for (const _ of value) length++;
  return length;
}
