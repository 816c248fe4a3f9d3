import fc from 'fast-check';
import { CONTRACT, contractSchema } from '../../test/support/contract.js';
import { escapePointer } from '../body/strict-json.js';
import { AppError } from '../problem/app-error.js';
import { FieldError } from '../problem/error-catalog.js';
import { LEAD_FIELD_NAMES, LEAD_FIELDS, LeadField } from './lead-rules.js';
import { LeadValidationService } from './lead-validation.service.js';

/**
 * The contract is the source of truth (docs/decisions/0018-the-contract-is-the-source-of-truth.md): the lead rules in
 * code (LeadValidationService and lead-rules.ts) accept and reject exactly what the contract's LeadInput schema
 * accepts and rejects, over the contract's own examples, over generated inputs aimed at every boundary of the lead
 * rules (docs/decisions/0002-lead-fields-and-normalisation.md), and over a table of hand-picked cases.
 */

type Body = Record<string, unknown>;

const contractValidate = contractSchema('/components/schemas/LeadInput');
const normalisedValidate = contractSchema('/components/schemas/NormalisedLead');
const service = new LeadValidationService();

interface Verdict {
  accepts: boolean;
  /** JSON Pointers of the fields each side complains about. */
  fields: string[];
  errors: unknown;
}

/** The part of an ajv error this file reads. */
interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, string>;
  message?: string;
}

function byContract(body: unknown): Verdict {
  const accepts = contractValidate(body) as boolean;
  const errors: SchemaError[] = contractValidate.errors ?? [];
  const fields = errors.map((e) =>
    e.keyword === 'required'
      ? `/${escapePointer(e.params.missingProperty)}`
      : e.keyword === 'additionalProperties'
        ? `/${escapePointer(e.params.additionalProperty)}`
        : e.instancePath,
  );
  return { accepts, fields: [...new Set(fields)].sort(), errors: errors.map((e) => `${e.instancePath || '/'} ${e.keyword} ${e.message}`) };
}

function byService(body: unknown): Verdict & { lead?: unknown } {
  try {
    const lead = service.validate(body as Body);
    return { accepts: true, fields: [], errors: [], lead };
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
    const errors = (error.options.errors ?? []) as FieldError[];
    return { accepts: false, fields: [...new Set(errors.map((e) => e.pointer))].sort(), errors };
  }
}

/** JSON with every character outside printable ASCII escaped, so invisible and lone-surrogate input is readable. */
function show(value: unknown): string {
  const escape = (text: string) => text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
  const summarise = (v: unknown): unknown => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 40)}…(${[...v].length} code points)…${v.slice(-20)}` : v);
  const compact =
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, summarise(v)])) : value;
  return escape(JSON.stringify(compact));
}

function disagreement(body: unknown, contract: Verdict, code: Verdict): string {
  const side = (v: Verdict) => (v.accepts ? 'ACCEPTS' : `rejects ${v.fields.join(', ') || '(body)'}`);
  return [
    'The contract (ajv, LeadInput) and LeadValidationService disagree.',
    `  input:    ${show(body)}`,
    `  contract: ${side(contract)} ${JSON.stringify(contract.errors)}`,
    `  service:  ${side(code)} ${show(code.errors)}`,
  ].join('\n');
}

/**
 * Both sides judge the body; a disagreement (on the verdict or on which fields are wrong) throws with the details.
 * An accepted body must also normalise to what the contract promises the sandbox returns.
 */
function expectAgreement(body: Body): boolean {
  const contract = byContract(body);
  const code = byService(body);
  if (contract.accepts !== code.accepts || contract.fields.join() !== code.fields.join()) {
    throw new Error(disagreement(body, contract, code));
  }
  if (code.accepts && !normalisedValidate(code.lead)) {
    throw new Error(
      `Accepted input normalises to a lead the contract's NormalisedLead rejects.\n  input:  ${show(body)}\n  output: ${show(code.lead)}\n  errors: ${JSON.stringify(normalisedValidate.errors)}`,
    );
  }
  return contract.accepts;
}

/* ------------------------------------------------------------------ (a) the contract's own examples */

type Json = Record<string, any>;

function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  const target = (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, token: string) => at[token.replace(/~1/g, '/').replace(/~0/g, '~')], CONTRACT);
  return resolve(target);
}

function contractExamples(): [string, unknown][] {
  const found: [string, unknown][] = [];
  const schema = CONTRACT.components.schemas.LeadInput;
  (schema.examples ?? []).forEach((example: unknown, i: number) => found.push([`components.schemas.LeadInput.examples[${i}]`, example]));
  if (schema.example !== undefined) found.push(['components.schemas.LeadInput.example', schema.example]);
  for (const path of ['/api/v1/lead', '/api/v1/sandbox']) {
    const media = resolve(CONTRACT.paths[path].post.requestBody).content['application/json'];
    if (media.example !== undefined) found.push([`POST ${path} example`, media.example]);
    for (const [name, example] of Object.entries(media.examples ?? {})) found.push([`POST ${path} examples.${name}`, resolve(example as Json).value]);
  }
  return found;
}

describe('LeadInput: the contract and LeadValidationService agree', () => {
  describe('(a) on every example in the contract', () => {
    const examples = contractExamples();

    it('finds the schema examples and the request-body examples of both operations', () => {
      const sources = examples.map(([where]) => where);
      expect(sources.filter((s) => s.startsWith('components.schemas.LeadInput')).length).toBeGreaterThanOrEqual(1);
      expect(sources.filter((s) => s.startsWith('POST /api/v1/lead ')).length).toBeGreaterThanOrEqual(1);
      expect(sources.filter((s) => s.startsWith('POST /api/v1/sandbox ')).length).toBeGreaterThanOrEqual(1);
    });

    it.each(examples)('%s is accepted by both', (_where, example) => {
      expect(byContract(example)).toMatchObject({ accepts: true });
      expect(byService(example)).toMatchObject({ accepts: true });
      expectAgreement(example as Body);
    });

    const MINIMAL = { nome: 'Ana', email: 'ana@exemplo.com' };
    const propertyExamples = Object.entries(CONTRACT.components.schemas.LeadInput.properties as Record<string, Json>).flatMap(([field, property]) =>
      ((property.examples ?? []) as unknown[]).map((example) => [field, example] as const),
    );

    it('has a property example for every lead field, and for legal_bases and consent_text', () => {
      expect([...new Set(propertyExamples.map(([field]) => field))].sort()).toEqual([...LEAD_FIELD_NAMES, 'legal_bases', 'consent_text'].sort());
    });

    // A wording goes with a consent entry (the service refuses it alone; the schema cannot say so).
    const CONSENT = { legal_bases: [{ category: 'communications', type: 'consent', status: 'granted' }] };
    it.each(propertyExamples)('the %s property example %j is accepted by both', (field, example) => {
      const body = { ...MINIMAL, ...(field === 'consent_text' ? CONSENT : {}), [field]: example };
      expect(byContract(body)).toMatchObject({ accepts: true });
      expect(byService(body)).toMatchObject({ accepts: true });
    });
  });

  /* ------------------------------------------------------------------ (b) generated inputs */

  describe('(b) on generated inputs aimed at the boundaries', () => {
    const LENGTHS = [0, 1, 2, 7, 8, 32, 33, 64, 65, 119, 120, 121, 253, 254, 255, 4999, 5000, 5001];
    const WHITESPACE = [' ', '\t', '\n', '\r', '\v', '\f', '\u00A0', '\u1680', '\u2000', '\u200A', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\uFEFF'];
    const CONTROLS = ['\u0000', '\u0001', '\u0007', '\u0008', '\u000B', '\u001B', '\u001F', '\u007F', '\u0085', '\u009F'];
    const LONE_SURROGATES = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D'];
    const BIDI = ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];
    const NONCHARACTERS = ['\uFFFE', '\uFFFF', '\uFDD0', '\uFDEF', '\u{1FFFE}', '\u{10FFFF}'];
    /** Invisible, but neither control, bidi control nor whitespace: refused only when nothing visible is left. */
    const INVISIBLE = [
      '\u200B',
      '\u200C',
      '\u200D',
      '\u2060',
      '\u00AD',
      '\u180E',
      '\u034F',
      '\u115F',
      '\u1160',
      '\u3164',
      '\uFFA0',
      '\u2800',
      '\uFFFC',
      '\uFE0F',
      '\u{E0100}',
      '\u0301',
    ];
    /** Unicode tag characters (and the unassigned U+E0000 and U+E0080 around them). */
    const TAGS = ['\u{E0000}', '\u{E0001}', '\u{E0020}', '\u{E0041}', '\u{E007F}', '\u{E0080}'];
    const EMOJI = ['😀', '👩‍💻', '🇧🇷', '👍🏽', '❤️', '\u{1F600}'];
    /** Combining marks, and characters whose NFC form is longer (composition exclusions) or shorter. */
    const COMBINING = ['e\u0301', '\u0301', '\u0958', '\u{1D160}', '\uFB1D', 'A\u030A', '\u212B'];
    const SPECIAL = [
      ...WHITESPACE,
      ...CONTROLS,
      ...LONE_SURROGATES,
      ...BIDI,
      ...NONCHARACTERS,
      ...INVISIBLE,
      ...TAGS,
      ...EMOJI,
      ...COMBINING,
      '@',
      '.',
      '+',
      '-',
      '(',
      ')',
    ];

    const codePoints = (text: string) => Array.from(text);
    const one = <T>(items: readonly T[]) => fc.constantFrom(...items);

    const whitespaceRun = fc.array(one(WHITESPACE), { maxLength: 3 }).map((parts) => parts.join(''));
    /** Mostly nothing, sometimes whitespace of every kind: trimming must count the same on both sides. */
    const padding = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 2, arbitrary: whitespaceRun });

    /** A filler of printable graphemes (or a single repeated character) to stretch to any length cheaply. */
    const filler = fc.oneof(
      fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 6 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
      one(['a', 'é', 'Ação ', '😀', '日本', '1', 'a b', 'x\u00A0y', '\u200B']),
    );

    /** Exactly `length` code points, cycled from the filler, with a few positions overwritten by special characters. */
    function stretched(length: number) {
      return fc
        .record({
          fill: filler,
          specials: fc.array(fc.tuple(fc.nat(), one(SPECIAL)), { maxLength: 3 }),
          before: padding,
          after: padding,
        })
        .map(({ fill, specials, before, after }) => {
          const unit = codePoints(fill);
          const cps = Array.from({ length }, (_, i) => unit[i % unit.length]);
          for (const [at, special] of specials) if (length) cps[at % length] = special;
          return before + cps.join('') + after;
        });
    }

    const boundaryText = one(LENGTHS).chain((length) => stretched(length));
    const shortText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
      fc.string({ unit: 'binary-ascii', maxLength: 12 }),
      fc.array(fc.oneof(one(SPECIAL), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 2 })), { maxLength: 6 }).map((parts) => parts.join('')),
    );
    /** Non-string JSON values: always wrong, and must be wrong for both. */
    const nonString = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
      fc.constant([]),
      fc.constant({}),
    );

    const LABEL_CHARS = ['a', 'z', '0', '9', '-', 'A', 'Z', 'ç', 'ñ', 'ü', '日', 'İ', 'ß', '\u0301', '_', '😀'];
    const label = fc.oneof(
      { weight: 6, arbitrary: one(['exemplo', 'com', 'br', 'gmail', 'xn--nandu-rta', 'empresa-x', 'EMPRESA', 'ñandú', '日本', 'a', '1', 'müller']) },
      { weight: 2, arbitrary: fc.array(one(LABEL_CHARS), { minLength: 0, maxLength: 8 }).map((c) => c.join('')) },
      { weight: 1, arbitrary: one([62, 63, 64]).map((n) => 'd'.repeat(n)) },
      { weight: 1, arbitrary: shortText },
    );
    const localPart = fc.oneof(
      { weight: 6, arbitrary: one(['maria', 'maria.souza', 'Jose.X', 'a', "o'neil", 'a+tag', 'user_name', "!#$%&'*+/=?^_`{|}~-", 'joão', '用户']) },
      { weight: 2, arbitrary: one(['.a', 'a.', 'a..b', '', '"a b"', 'a b', 'a\tb', 'a@b']) },
      { weight: 1, arbitrary: shortText },
    );
    /** E-mail-like strings: zero, one or two @, dotted or undotted domains, unicode, uppercase, stretched towards 254. */
    const emailLike = fc
      .record({
        local: localPart,
        ats: fc.oneof({ weight: 8, arbitrary: fc.constant('@') }, { weight: 1, arbitrary: one(['', '@@', '＠']) }),
        labels: fc.array(label, { minLength: 1, maxLength: 4 }),
        upper: fc.boolean(),
        stretchTo: fc.option(one([3, 4, 5, 120, 253, 254, 255, 256]), { freq: 3 }),
        before: padding,
        after: padding,
      })
      .map(({ local, ats, labels, upper, stretchTo, before, after }) => {
        let address = `${local}${ats}${labels.join('.')}`;
        if (upper) address = address.toUpperCase();
        if (stretchTo !== null) {
          const missing = stretchTo - codePoints(address).length;
          address = missing > 0 ? 'a'.repeat(missing) + address : codePoints(address).slice(-stretchTo).join('');
        }
        return before + address + after;
      });

    /** Addresses that should pass: valid local parts and two to four valid labels, sometimes stretched to 253 or 254. */
    const wellFormedEmail = fc
      .record({
        local: one(['maria', 'maria.souza', 'Jose.X', 'a', "o'neil", 'a+tag', 'user_name', 'joão', '用户', 'MARIA']),
        labels: fc.array(one(['exemplo', 'com', 'br', 'gmail', 'xn--nandu-rta', 'empresa-x', 'EMPRESA', 'ñandú', '日本', 'a', '1', 'müller']), {
          minLength: 2,
          maxLength: 4,
        }),
        stretchTo: fc.option(one([253, 254]), { freq: 4 }),
        before: padding,
        after: padding,
      })
      .map(({ local, labels, stretchTo, before, after }) => {
        let domain = labels.join('.');
        let missing = stretchTo === null ? 0 : stretchTo - codePoints(`${local}@${domain}`).length;
        // Stretched with domain labels (each at most 63, plus its dot): the local part stays within its 64 octets.
        if (missing === 1) local = `a${local}`;
        for (; missing > 1;) {
          const length = missing === 65 ? 62 : Math.min(63, missing - 1);
          domain = `${'d'.repeat(length)}.${domain}`;
          missing -= length + 1;
        }
        return `${before}${local}@${domain}${after}`;
      });

    const PHONE_CHARS = ['0', '1', '2', '5', '9', '+', '-', '(', ')', '.', ' '];
    const PHONE_INTRUDERS = ['x', '/', '#', 'a', '\u00A0', '\t', '\u0663', '\uFF11', '*', ',', '\u2212', '\u2028'];
    /** Telephone-like strings around 8 and 32 characters, with inner spaces and the odd character that does not belong. */
    const telephoneLike = fc
      .record({
        length: fc.oneof(one([0, 1, 6, 7, 8, 9, 31, 32, 33, 34]), fc.integer({ min: 0, max: 40 })),
        chars: fc.array(one(PHONE_CHARS), { minLength: 1, maxLength: 40 }),
        intruders: fc.array(fc.tuple(fc.nat(), one(PHONE_INTRUDERS)), { maxLength: 1 }),
        before: padding,
        after: padding,
      })
      .map(({ length, chars, intruders, before, after }) => {
        const cps = Array.from({ length }, (_, i) => chars[i % chars.length]);
        for (const [at, intruder] of intruders) if (length) cps[at % length] = intruder;
        return before + cps.join('') + after;
      });
    const realisticTelephone = one(['+55 (11) 98765-4321', '(11) 98765-4321', '11987654321', '+1 415.555.0100', '0800 123 4567', '+44 20 7946 0958']);

    const nameLike = one([
      'Maria Fernanda Souza',
      'José',
      'Jose\u0301',
      '  Ana   Lima ',
      "O'Brien",
      'Zoë Ñúñez',
      '李小龙',
      'a',
      'Souza & Filhos Comércio Ltda.',
    ]);
    const messageLike = one(['Olá!\nPodem me ligar?', 'linha 1\r\nlinha 2', 'coluna\tcoluna', '\n\nno meio\n\n', 'x']);

    /** Strings of invisible characters and whitespace, sometimes with one visible character or a tag among them. */
    const blankLooking = fc
      .record({
        blank: fc.array(fc.oneof(one(INVISIBLE), one(WHITESPACE)), { minLength: 1, maxLength: 8 }),
        extra: fc.option(fc.tuple(fc.nat(), one(['a', '1', '(', '.', ...TAGS])), { freq: 2 }),
      })
      .map(({ blank, extra }) => {
        if (extra) blank.splice(extra[0] % (blank.length + 1), 0, extra[1]);
        return blank.join('');
      });

    const realistic: Record<LeadField, fc.Arbitrary<string>> = {
      nome: nameLike,
      email: wellFormedEmail,
      telefone: realisticTelephone,
      empresa: nameLike,
      mensagem: messageLike,
      origem: one(['site-contato', 'mcp', 'cli', 'utm_source=google']),
    };

    /** Values for one field: realistic, boundary-length, short and odd, type-confused, and (for every field) e-mail and telephone shapes. */
    function valueFor(field: LeadField): fc.Arbitrary<unknown> {
      const shaped = field === 'email' ? emailLike : field === 'telefone' ? telephoneLike : boundaryText;
      return fc.oneof(
        { weight: 4, arbitrary: realistic[field] },
        { weight: 4, arbitrary: shaped },
        { weight: 3, arbitrary: boundaryText },
        { weight: 2, arbitrary: shortText },
        { weight: 1, arbitrary: emailLike },
        { weight: 1, arbitrary: telephoneLike },
        { weight: 1, arbitrary: nonString },
        { weight: 1, arbitrary: blankLooking },
      );
    }

    const UNKNOWN_KEYS = [
      'toString',
      '__proto__',
      'constructor',
      'prototype',
      'hasOwnProperty',
      'valueOf',
      'isPrototypeOf',
      'Nome',
      'EMAIL',
      'nome ',
      'telefone_e164',
      'id',
      '',
    ];
    const unknownEntries = fc.oneof(
      { weight: 6, arbitrary: fc.constant([] as [string, unknown][]) },
      {
        weight: 2,
        arbitrary: fc.array(fc.tuple(fc.oneof(one(UNKNOWN_KEYS), fc.string({ maxLength: 6 })), fc.oneof(fc.string({ maxLength: 4 }), nonString)), {
          minLength: 1,
          maxLength: 2,
        }),
      },
    );

    /** A whole body: each field present or missing (required ones mostly present), plus the odd unknown key. */
    const body = fc
      .record({
        // Mostly realistic values, so that most bodies fail on one thing at most and a fair share pass.
        fields: fc.tuple(
          ...LEAD_FIELD_NAMES.map((field) =>
            fc.option(fc.oneof({ weight: 3, arbitrary: realistic[field] }, { weight: 1, arbitrary: valueFor(field) }), {
              freq: LEAD_FIELDS[field].required ? 12 : 2,
            }),
          ),
        ),
        extra: unknownEntries,
      })
      .map(({ fields, extra }) => {
        const entries: [string, unknown][] = LEAD_FIELD_NAMES.flatMap((field, i) => (fields[i] === null ? [] : [[field, fields[i]] as [string, unknown]]));
        // Object.fromEntries defines own properties, so "__proto__" is a key here just as JSON.parse makes it one.
        return Object.fromEntries([...entries, ...extra]);
      });

    const VALID: Body = { nome: 'Ana', email: 'ana@exemplo.com' };

    it.each(LEAD_FIELD_NAMES)('on any value of %s in an otherwise valid body', (field) => {
      let accepted = 0;
      fc.assert(
        fc.property(valueFor(field), (value) => {
          if (expectAgreement({ ...VALID, [field]: value })) accepted++;
        }),
        { numRuns: 600 },
      );
      // Agreement on rejections alone would prove little: a fair share of the generated values must be valid.
      expect(accepted).toBeGreaterThan(60);
    });

    it('on whole bodies with missing, extra and mistyped fields', () => {
      let accepted = 0;
      fc.assert(
        fc.property(body, (input) => {
          if (expectAgreement(input)) accepted++;
        }),
        { numRuns: 1500 },
      );
      expect(accepted).toBeGreaterThan(300);
    });
  });

  /* ------------------------------------------------------------------ (c) table cases at each boundary */

  describe('(c) on hand-picked cases at each boundary of the lead rules', () => {
    const VALID: Body = { nome: 'Ana', email: 'ana@exemplo.com' };
    const n = (count: number, char = 'a') => char.repeat(count);
    /** An address of exactly `length` code points: a short local part and a domain of labels up to 63 long. */
    const address = (length: number, tld = 'com') => {
      let domain = tld;
      for (let left = length - 'ana@'.length - [...tld].length; left > 0;) {
        // Each label costs its length plus a dot; never leave a single code point over.
        const label = left === 65 ? 62 : Math.min(63, left - 1);
        domain = `${n(label, 'd')}.${domain}`;
        left -= label + 1;
      }
      return `ana@${domain}`;
    };
    const ws = ' \t\u00A0\u2028\uFEFF';

    const cases: [string, Body, boolean][] = [
      // nome 1..120
      ['nome missing', { email: 'ana@exemplo.com' }, false],
      ['nome empty', { ...VALID, nome: '' }, false],
      ['nome only whitespace', { ...VALID, nome: ws }, false],
      ['nome 1', { ...VALID, nome: 'A' }, true],
      ['nome 120', { ...VALID, nome: n(120) }, true],
      ['nome 121', { ...VALID, nome: n(121) }, false],
      ['nome 120 padded with every kind of whitespace', { ...VALID, nome: `${ws}${n(120)}${ws}` }, true],
      ['nome 120 astral code points (240 UTF-16 units)', { ...VALID, nome: n(120, '😀') }, true],
      ['nome 121 astral code points', { ...VALID, nome: n(121, '😀') }, false],
      ['nome with inner spaces and NBSP', { ...VALID, nome: 'Maria\u00A0 da   Silva' }, true],
      ['nome with inner U+2028', { ...VALID, nome: 'Maria\u2028Silva' }, true],
      ['nome with inner tab', { ...VALID, nome: 'Maria\tSilva' }, false],
      ['nome with inner line feed', { ...VALID, nome: 'Maria\nSilva' }, false],
      ['nome with NUL', { ...VALID, nome: 'Ana\u0000' }, false],
      ['nome with U+0085 (a control, not whitespace)', { ...VALID, nome: 'Ana\u0085' }, false],
      ['nome with DEL', { ...VALID, nome: 'A\u007Fna' }, false],
      ['nome with a lone high surrogate', { ...VALID, nome: 'Ana\uD800' }, false],
      ['nome with a lone low surrogate', { ...VALID, nome: '\uDC00Ana' }, false],
      ['nome with RLO', { ...VALID, nome: 'Ana\u202E' }, false],
      ['nome with LRI', { ...VALID, nome: '\u2066Ana' }, false],
      ['nome with ALM', { ...VALID, nome: 'An\u061Ca' }, false],
      ['nome with U+FFFE', { ...VALID, nome: 'Ana\uFFFE' }, false],
      ['nome with U+FDD0', { ...VALID, nome: 'Ana\uFDD0' }, false],
      ['nome with U+10FFFF', { ...VALID, nome: 'Ana\u{10FFFF}' }, false],
      ['nome with emoji and ZWJ', { ...VALID, nome: 'Ana 👩‍💻' }, true],
      ['nome with a combining accent', { ...VALID, nome: 'Jose\u0301' }, true],
      ['nome a number', { ...VALID, nome: 42 }, false],
      // nothing visible, and tag characters (a hidden message for agents that read leads)
      ...(
        [
          ['U+200B', '\u200B'],
          ['U+200D', '\u200D'],
          ['U+2060', '\u2060'],
          ['U+00AD', '\u00AD'],
          ['U+034F', '\u034F'],
          ['U+115F', '\u115F'],
          ['U+1160', '\u1160'],
          ['U+3164', '\u3164'],
          ['U+FFA0', '\uFFA0'],
          ['U+2800', '\u2800'],
          ['U+FFFC', '\uFFFC'],
          ['U+FE0F', '\uFE0F'],
          ['a lone combining acute', '\u0301'],
          ['marks, fillers and spaces', ' \u0301\u200B \u3164\u0308 '],
        ] as const
      ).flatMap(([name, blank]): [string, Body, boolean][] => [
        [`nome of ${name} alone`, { ...VALID, nome: blank }, false],
        [`empresa of ${name} thrice`, { ...VALID, empresa: n(3, blank) }, false],
        [`mensagem of ${name} between line breaks`, { ...VALID, mensagem: `\n${blank}\n` }, false],
        [`origem of ${name} alone`, { ...VALID, origem: blank }, false],
        [`nome with ${name} beside a letter`, { ...VALID, nome: `A${blank}` }, true],
      ]),
      ['nome with tag characters after a letter', { ...VALID, nome: 'Ana\u{E0001}\u{E0069}\u{E0067}\u{E007F}' }, false],
      ['nome of U+E0000', { ...VALID, nome: 'Ana\u{E0000}' }, false],
      ['nome with a variation selector from the supplement (U+E0100, not a tag)', { ...VALID, nome: 'Ana\u{E0100}' }, true],
      ['empresa with a tag character', { ...VALID, empresa: 'X\u{E0020}' }, false],
      ['mensagem with tag characters', { ...VALID, mensagem: 'Oi\u{E0049}\u{E0067}\u{E006E}' }, false],
      ['origem with a cancel tag', { ...VALID, origem: 'site\u{E007F}' }, false],
      ['nome with U+E0080 (past the tags)', { ...VALID, nome: 'Ana\u{E0080}' }, true],
      ['nome null', { ...VALID, nome: null }, false],
      ['nome an array of strings', { ...VALID, nome: ['Ana'] }, false],
      ['nome an object', { ...VALID, nome: { first: 'Ana' } }, false],
      // email 3..254, one @, dotted domain
      ['email missing', { nome: 'Ana' }, false],
      ['email shortest dotted address', { ...VALID, email: 'a@b.c' }, true],
      ['email without @', { ...VALID, email: 'ana.exemplo.com' }, false],
      ['email with two @', { ...VALID, email: 'ana@x@exemplo.com' }, false],
      ['email undotted domain', { ...VALID, email: 'ana@localhost' }, false],
      ['email domain with trailing dot', { ...VALID, email: 'ana@exemplo.com.' }, false],
      ['email domain with empty label', { ...VALID, email: 'ana@exemplo..com' }, false],
      ['email label starting with hyphen', { ...VALID, email: 'ana@-exemplo.com' }, false],
      ['email label of 63', { ...VALID, email: `ana@${n(63, 'd')}.com` }, true],
      ['email label of 64', { ...VALID, email: `ana@${n(64, 'd')}.com` }, false],
      ['email local part with leading dot', { ...VALID, email: '.ana@exemplo.com' }, false],
      ['email local part with double dot', { ...VALID, email: 'a..na@exemplo.com' }, false],
      ['email with inner space', { ...VALID, email: 'an a@exemplo.com' }, false],
      ['email upper case', { ...VALID, email: 'ANA@EXEMPLO.COM.BR' }, true],
      ['email unicode local part and domain', { ...VALID, email: 'joão@ñandú.com.br' }, true],
      ['email 253', { ...VALID, email: address(253) }, true],
      ['email 254', { ...VALID, email: address(254) }, true],
      ['email 255', { ...VALID, email: address(255) }, false],
      ['email 254 padded with whitespace', { ...VALID, email: `${ws}${address(254)}${ws}` }, true],
      ['email local part of 64 octets', { ...VALID, email: `${n(64)}@exemplo.com` }, true],
      ['email local part of 65 octets', { ...VALID, email: `${n(65)}@exemplo.com` }, false],
      ['email local part of 32 two-octet letters (64 octets)', { ...VALID, email: `${n(32, 'ç')}@exemplo.com` }, true],
      ['email local part of 33 two-octet letters (66 octets, 33 code points)', { ...VALID, email: `${n(33, 'ç')}@exemplo.com` }, false],
      ['email local part of 16 astral letters (64 octets)', { ...VALID, email: `${n(16, '\u{20000}')}@exemplo.com` }, true],
      ['email local part of 17 astral letters (68 octets)', { ...VALID, email: `${n(17, '\u{20000}')}@exemplo.com` }, false],
      ['email local part of 64 octets padded with whitespace', { ...VALID, email: `${ws}${n(64)}@exemplo.com${ws}` }, true],
      ['email IPv4 literal domain', { ...VALID, email: 'a@1.2.3.4' }, false],
      ['email bracketed IPv4 literal', { ...VALID, email: 'a@[1.2.3.4]' }, false],
      ['email IPv6 literal', { ...VALID, email: 'a@[IPv6:2001:db8::1]' }, false],
      ['email all-digit last label', { ...VALID, email: 'ana@exemplo.123' }, false],
      ['email digits before a lettered last label', { ...VALID, email: 'ana@123.456.com' }, true],
      ['email last label with a digit and a letter', { ...VALID, email: 'ana@exemplo.a1' }, true],
      ['email with a tag character', { ...VALID, email: 'ana\u{E0041}@exemplo.com' }, false],
      ['email with a bidi control', { ...VALID, email: 'ana\u202E@exemplo.com' }, false],
      ['email with the Kelvin sign for K', { ...VALID, email: '\u212Aate@exemplo.com.br' }, false],
      ['email with a fullwidth letter', { ...VALID, email: '\uFF4Bate@exemplo.com.br' }, false],
      ['email with a ligature in the domain', { ...VALID, email: 'ana@\uFB01rma.com.br' }, false],
      ['email with a superscript digit', { ...VALID, email: 'ana\u00B2@exemplo.com.br' }, false],
      ['email decomposed (NFD) but without compatibility characters', { ...VALID, email: 'jo\u0061\u0303o@exemplo.com.br' }, true],
      ['email a number', { ...VALID, email: 1 }, false],
      // telefone 8..32, digits and + - ( ) . space
      ['telefone 7', { ...VALID, telefone: n(7, '1') }, false],
      ['telefone 8', { ...VALID, telefone: n(8, '1') }, true],
      ['telefone 32', { ...VALID, telefone: n(32, '1') }, true],
      ['telefone 33', { ...VALID, telefone: n(33, '1') }, false],
      ['telefone 8 after trimming', { ...VALID, telefone: `${ws}12345678${ws}` }, true],
      ['telefone 7 plus padding', { ...VALID, telefone: '  1234567  ' }, false],
      ['telefone with every allowed character', { ...VALID, telefone: '+55 (11) 98765-4321.' }, true],
      ['telefone with a letter', { ...VALID, telefone: '+55 11 9876x4321' }, false],
      ['telefone with an inner NBSP', { ...VALID, telefone: '+55\u00A011 98765-4321' }, false],
      ['telefone with an inner tab', { ...VALID, telefone: '+55\t11 98765-4321' }, false],
      ['telefone with fullwidth digits', { ...VALID, telefone: '\uFF11\uFF11987654321' }, false],
      ['telefone with Arabic-Indic digits', { ...VALID, telefone: '\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668' }, false],
      ['telefone empty', { ...VALID, telefone: '' }, false],
      ['telefone a number', { ...VALID, telefone: 11987654321 }, false],
      ['telefone null', { ...VALID, telefone: null }, false],
      ['telefone of 8 parentheses, no digit', { ...VALID, telefone: '((((((((' }, false],
      ['telefone with 7 digits among 10 characters', { ...VALID, telefone: '(11) 1234-5' }, false],
      ['telefone with 8 digits among separators', { ...VALID, telefone: '(1) 2-3.4 5+6(7)8' }, true],
      ['telefone of 8 spaced dots around 7 digits', { ...VALID, telefone: '. . . .1234567' }, false],
      ['telefone of 2,500 spaces and 12345678x (the old pattern backtracked for seconds)', { ...VALID, telefone: `${n(2500, ' ')}12345678x` }, false],
      ['telefone of 12345678 padded by 2,500 spaces each side', { ...VALID, telefone: `${n(2500, ' ')}12345678${n(2500, ' ')}` }, true],
      ['telefone with a tag character', { ...VALID, telefone: '11987654321\u{E0031}' }, false],
      // empresa 1..120
      ['empresa empty', { ...VALID, empresa: '' }, false],
      ['empresa 1', { ...VALID, empresa: 'X' }, true],
      ['empresa 120', { ...VALID, empresa: n(120) }, true],
      ['empresa 121', { ...VALID, empresa: n(121) }, false],
      ['empresa with inner tab', { ...VALID, empresa: 'Souza\tFilhos' }, false],
      ['empresa a boolean', { ...VALID, empresa: true }, false],
      // mensagem 1..5000, line breaks kept
      ['mensagem empty', { ...VALID, mensagem: '' }, false],
      ['mensagem only line breaks', { ...VALID, mensagem: '\n\r\n\t' }, false],
      ['mensagem 1', { ...VALID, mensagem: '?' }, true],
      ['mensagem 4999', { ...VALID, mensagem: n(4999) }, true],
      ['mensagem 5000', { ...VALID, mensagem: n(5000) }, true],
      ['mensagem 5001', { ...VALID, mensagem: n(5001) }, false],
      ['mensagem 5000 astral code points', { ...VALID, mensagem: n(5000, '😀') }, true],
      ['mensagem 5001 astral code points', { ...VALID, mensagem: n(5001, '😀') }, false],
      ['mensagem 5000 with inner line breaks and tabs', { ...VALID, mensagem: `${n(2498)}\r\n\t${n(2499)}` }, true],
      ['mensagem with vertical tab inside', { ...VALID, mensagem: 'a\u000Bb' }, false],
      ['mensagem with form feed inside', { ...VALID, mensagem: 'a\u000Cb' }, false],
      ['mensagem with ESC', { ...VALID, mensagem: 'a\u001Bb' }, false],
      ['mensagem with U+0085', { ...VALID, mensagem: 'a\u0085b' }, false],
      ['mensagem with PDF', { ...VALID, mensagem: 'a\u202Cb' }, false],
      ['mensagem with a lone surrogate', { ...VALID, mensagem: 'a\uDFFFb' }, false],
      ['mensagem with U+FFFF', { ...VALID, mensagem: 'a\uFFFFb' }, false],
      // origem 1..64
      ['origem empty', { ...VALID, origem: '' }, false],
      ['origem 1', { ...VALID, origem: 'x' }, true],
      ['origem 64', { ...VALID, origem: n(64) }, true],
      ['origem 65', { ...VALID, origem: n(65) }, false],
      ['origem 64 padded', { ...VALID, origem: `${ws}${n(64)}${ws}` }, true],
      ['origem with inner line feed', { ...VALID, origem: 'a\nb' }, false],
      ['origem an object', { ...VALID, origem: {} }, false],
      // the body as a whole
      ['empty body', {}, false],
      ['unknown field', { ...VALID, website: 'x' }, false],
      ['field name in another case', { ...VALID, Nome: 'Ana' }, false],
      ['telefone_e164 is output only', { ...VALID, telefone_e164: '+5511987654321' }, false],
      ['own key toString', { ...VALID, toString: 'x' }, false],
      ['own key constructor', { ...VALID, constructor: 'x' }, false],
      ['own key hasOwnProperty', { ...VALID, hasOwnProperty: 'x' }, false],
      ['own key __proto__', JSON.parse('{"nome":"Ana","email":"ana@exemplo.com","__proto__":"x"}') as Body, false],
    ];

    it.each(cases)('%s', (_name, input, valid) => {
      expect({ contract: byContract(input).accepts, service: byService(input).accepts }).toEqual({ contract: valid, service: valid });
      expectAgreement(input);
    });

    // Bounds are measured before NFC and before the domain is lower-cased, so valid input can normalise to longer
    // text; the contract's NormalisedLead has wider bounds for exactly that.
    const LENGTHENED: [string, Body][] = [
      ['nome of 120 × U+1D160, which NFC turns into 360 code points', { ...VALID, nome: n(120, '\u{1D160}') }],
      ['email of 254 whose domain ends in U+0130, which lower-cases to two code points', { ...VALID, email: address(254, 'exemplo.\u0130') }],
    ];

    it.each(LENGTHENED)('accepts a %s', (_name, input) => {
      expect({ contract: byContract(input).accepts, service: byService(input).accepts }).toEqual({ contract: true, service: true });
    });

    it.each(LENGTHENED)('returns the normalised %s in a shape NormalisedLead accepts', (_name, input) => {
      expect(normalisedValidate(service.validate(input))).toBe(true);
    });

    it('uses the documented bounds', () => {
      const bounds = Object.fromEntries(LEAD_FIELD_NAMES.map((f) => [f, [LEAD_FIELDS[f].required, LEAD_FIELDS[f].min, LEAD_FIELDS[f].max]]));
      expect(bounds).toEqual({
        nome: [true, 1, 120],
        email: [true, 3, 254],
        telefone: [false, 8, 32],
        empresa: [false, 1, 120],
        mensagem: [false, 1, 5000],
        origem: [false, 1, 64],
      });
    });
  });
});
