import fc from 'fast-check';
import { MAX_FIELD_ERRORS } from '../problem/error-catalog.js';
import { escapePointer, MAX_JSON_DEPTH, parseStrictJson } from './strict-json.js';

/** The findings of a text that parses but breaks a structural rule, as [code, pointer] pairs. */
function findings(text: string): [string, string][] {
  const result = parseStrictJson(text);
  if (result.ok || result.syntax) throw new Error(`expected structural findings for ${text.slice(0, 80)}, got ${JSON.stringify(result).slice(0, 200)}`);
  return result.errors.map((e) => [e.code, e.pointer]);
}

const arrays = (depth: number, inner = '') => '['.repeat(depth) + inner + ']'.repeat(depth);
const objects = (depth: number, key = 'a', inner = '1') => `{"${key}":`.repeat(depth) + inner + '}'.repeat(depth);

describe('parseStrictJson', () => {
  describe('valid JSON', () => {
    it.each([
      ['an object', '{"nome":"Ana","email":"ana@exemplo.com"}', { nome: 'Ana', email: 'ana@exemplo.com' }],
      ['an empty object', '{}', {}],
      ['an array', '[1,"2",null,true,{"a":[]}]', [1, '2', null, true, { a: [] }]],
      ['a bare string', '"x"', 'x'],
      ['a bare number', '-1.5e3', -1500],
      ['null', 'null', null],
      ['whitespace around every token', ' \t\r\n{ "a" :\n[ 1 , 2 ] ,\t"b" : { } }\n', { a: [1, 2], b: {} }],
      ['the same key in sibling objects', '[{"a":1},{"a":2}]', [{ a: 1 }, { a: 2 }]],
      ['the same key at different depths', '{"a":{"a":{"a":1}}}', { a: { a: { a: 1 } } }],
      ['keys that differ only in case', '{"a":1,"A":2}', { a: 1, A: 2 }],
      ['keys that differ only in normalisation', '{"\u00e9":1,"e\u0301":2}', { '\u00e9': 1, 'e\u0301': 2 }],
      ['forbidden words as values, not keys', '{"a":"__proto__","b":["constructor","prototype"]}', { a: '__proto__', b: ['constructor', 'prototype'] }],
      ['keys that only contain a forbidden word', '{"__proto__x":1,"my constructor":2,"Prototype":3}', { __proto__x: 1, 'my constructor': 2, Prototype: 3 }],
    ])('accepts %s', (_name, text, value) => {
      expect(parseStrictJson(text)).toEqual({ ok: true, value });
    });

    it('accepts anything JSON.stringify writes (no duplicates, no forbidden keys, shallow) and returns the same value', () => {
      const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
      const key = fc.string({
        unit: fc.oneof(
          fc.constantFrom('"', '\\', '/', '~', ':', ',', '{', '}', '[', ']', ' ', '\n'),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        ),
        maxLength: 6,
      });
      const value = fc.jsonValue({ maxDepth: 6 }).filter((v) => !JSON.stringify(v).match(/"(__proto__|constructor|prototype)":/));
      fc.assert(
        fc.property(
          fc.dictionary(
            key.filter((k) => !FORBIDDEN.has(k)),
            value,
            { maxKeys: 5 },
          ),
          fc.constantFrom(undefined, 2, '\t'),
          (object, indent) => {
            const text = JSON.stringify(object, null, indent);
            expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('syntax errors', () => {
    it.each([
      ['an empty text', ''],
      ['only whitespace', ' \n'],
      ['an unclosed object', '{"a":1'],
      ['an unclosed string', '{"a":"1}'],
      ['a trailing comma in an object', '{"a":1,}'],
      ['a trailing comma in an array', '[1,]'],
      ['single quotes', "{'a':1}"],
      ['an unquoted key', '{a:1}'],
      ['a missing colon', '{"a" 1}'],
      ['an extra closing brace', '{"a":1}}'],
      ['two values', '{} {}'],
      ['an invalid escape', '{"a":"\\x"}'],
      ['a short unicode escape', '{"a":"\\u12"}'],
      ['a raw control character in a string', '{"a":"x\u0001y"}'],
      ['NaN', 'NaN'],
      ['a leading byte order mark', '\uFEFF{}'],
      ['a comment', '{"a":1 /* no */}'],
    ])('reports %s as a syntax error', (_name, text) => {
      expect(parseStrictJson(text)).toEqual({ ok: false, syntax: true });
    });
  });

  describe('duplicate keys', () => {
    it.each([
      ['a plain repeat', '{"a":1,"a":2}', '/a'],
      ['a repeat whose value is the same', '{"a":1,"a":1}', '/a'],
      ['an escaped repeat ("a" then "\\u0061")', '{"a":1,"\\u0061":2}', '/a'],
      ['an escaped first ("\\u0061" then "a")', '{"\\u0061":1,"a":2}', '/a'],
      ['upper-case hex in the escape', '{"\\u00E9":1,"\u00e9":2}', '/\u00e9'],
      ['a surrogate-pair escape of a raw emoji', '{"😀":1,"\\ud83d\\ude00":2}', '/😀'],
      ['an escaped solidus', '{"a/b":1,"a\\/b":2}', '/a~1b'],
      ['an escaped quote inside the key', '{"a\\"b":1,"a\\"b":2}', '/a"b'],
      ['a key ending in an escaped backslash', '{"a\\\\":1,"a\\\\":2}', '/a\\'],
      ['the empty key', '{"":1,"":2}', '/'],
      ['whitespace between key and colon', '{"a" \n\t : 1, "a"\r\n:2}', '/a'],
      ['a repeat after a nested object', '{"a":{"b":1,"c":2},"a":3}', '/a'],
      ['a repeat after a value holding quotes, colons, commas and brackets', '{"a":"\\":,[{}]\\\\","a":3}', '/a'],
      ['a repeat in a nested object', '{"x":{"y":{"b":1,"b":2}}}', '/x/y/b'],
      ['a repeat in an object inside an array', '[0,{"a":1},{"b":1,"b":2}]', '/2/b'],
    ])('finds %s', (_name, text, pointer) => {
      expect(findings(text)).toEqual([['duplicate_key', pointer]]);
    });

    it('reports every repeat after the first, in document order', () => {
      expect(findings('{"a":1,"b":1,"a":2,"b":2,"a":3}')).toEqual([
        ['duplicate_key', '/a'],
        ['duplicate_key', '/b'],
        ['duplicate_key', '/a'],
      ]);
    });

    it('names the key in the detail', () => {
      const result = parseStrictJson('{"email":1,"email":2}');
      expect(result).toEqual({
        ok: false,
        syntax: false,
        errors: [{ pointer: '/email', code: 'duplicate_key', detail: 'The key "email" appears more than once.' }],
      });
    });

    it('finds a key written once plainly and once fully escaped, whatever the key', () => {
      // Every UTF-16 unit as \uXXXX, so astral characters become surrogate-pair escapes.
      const escapeAll = (key: string) => Array.from({ length: key.length }, (_, i) => `\\u${key.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
      fc.assert(
        fc.property(
          fc.string({ unit: 'binary', maxLength: 8 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)),
          (key) => {
            expect(findings(`{${JSON.stringify(key)}:1,"${escapeAll(key)}":2}`)).toEqual([['duplicate_key', `/${escapePointer(key)}`]]);
          },
        ),
        { numRuns: 200 },
      );
    });
  });

  describe('forbidden keys', () => {
    it.each([
      ['__proto__ at the top', '{"__proto__":{}}', '/__proto__'],
      ['constructor at the top', '{"constructor":1}', '/constructor'],
      ['prototype at the top', '{"prototype":1}', '/prototype'],
      ['__proto__ written with escapes', '{"__proto\\u005f_":1}', '/__proto__'],
      ['constructor written with escapes', '{"\\u0063onstructor":1}', '/constructor'],
      ['__proto__ in a nested object', '{"nome":"Ana","extra":{"__proto__":{"admin":true}}}', '/extra/__proto__'],
      ['constructor in an object inside an array', '{"a":[1,2,{"constructor":{"prototype":1}}]}', '/a/2/constructor'],
      ['__proto__ deep inside arrays', '[[[{"__proto__":1}]]]', '/0/0/0/__proto__'],
    ])('rejects %s', (_name, text, pointer) => {
      expect(findings(text)[0]).toEqual(['forbidden_key', pointer]);
    });

    it('reports forbidden keys at every depth, each with its own pointer', () => {
      expect(findings('{"constructor":{"prototype":{"__proto__":1}}}')).toEqual([
        ['forbidden_key', '/constructor'],
        ['forbidden_key', '/constructor/prototype'],
        ['forbidden_key', '/constructor/prototype/__proto__'],
      ]);
    });

    it('reports a repeated forbidden key as forbidden each time (not as a duplicate)', () => {
      expect(findings('{"__proto__":1,"__proto__":2}')).toEqual([
        ['forbidden_key', '/__proto__'],
        ['forbidden_key', '/__proto__'],
      ]);
    });

    it('says which key in the detail', () => {
      const result = parseStrictJson('{"__proto__":1}');
      expect(result).toEqual({
        ok: false,
        syntax: false,
        errors: [{ pointer: '/__proto__', code: 'forbidden_key', detail: 'The key "__proto__" is not allowed.' }],
      });
    });
  });

  describe('nesting', () => {
    it('allows 32 levels, the limit', () => {
      expect(MAX_JSON_DEPTH).toBe(32);
      expect(parseStrictJson(arrays(32)).ok).toBe(true);
      expect(parseStrictJson(objects(32)).ok).toBe(true);
      expect(parseStrictJson(objects(31, 'a', '[1]')).ok).toBe(true);
    });

    it('rejects 33 levels of arrays at the 33rd, with the pointer of that array', () => {
      expect(parseStrictJson(arrays(33))).toEqual({
        ok: false,
        syntax: false,
        errors: [{ pointer: '/0'.repeat(32), code: 'nesting_too_deep', detail: 'JSON nested deeper than 32 levels is not accepted.' }],
      });
    });

    it('rejects 33 levels of objects, with the pointer of the innermost', () => {
      expect(findings(objects(33))).toEqual([['nesting_too_deep', '/a'.repeat(32)]]);
    });

    it('rejects 33 levels mixing objects and arrays, pointing through keys and indexes', () => {
      // 16 × {"k":[  then one more [] at level 33
      const text = '{"k":[0,'.repeat(16) + '[]' + ']}'.repeat(16);
      expect(findings(text)).toEqual([['nesting_too_deep', '/k/1'.repeat(16)]]);
      expect(parseStrictJson('{"k":[0,'.repeat(16) + '1' + ']}'.repeat(16)).ok).toBe(true);
    });

    it('counts only the open containers: 32 deep many times over is fine', () => {
      expect(parseStrictJson(`[${Array.from({ length: 50 }, () => arrays(31)).join(',')}]`).ok).toBe(true);
    });

    it('stops at the first level too deep, however deep the text goes, keeping findings before it', () => {
      expect(findings(arrays(100_000))).toEqual([['nesting_too_deep', '/0'.repeat(32)]]);
      expect(findings(`{"a":1,"a":2,"b":${arrays(40)},"c":1,"c":2}`)).toEqual([
        ['duplicate_key', '/a'],
        ['nesting_too_deep', '/b' + '/0'.repeat(31)],
      ]);
    });

    it('is not fooled by brackets inside strings', () => {
      expect(parseStrictJson(`{"a":"${'['.repeat(40)}","b":["{{{{","]]]]"]}`)).toEqual({ ok: true, value: { a: '['.repeat(40), b: ['{{{{', ']]]]'] } });
      expect(parseStrictJson(`${'['.repeat(32)}"[[[[{{{{"${']'.repeat(32)}`).ok).toBe(true);
    });
  });

  describe('pointers', () => {
    it.each([
      ['a key with a slash', '{"a/b":{"__proto__":1}}', '/a~1b/__proto__'],
      ['a key with a tilde', '{"m~n":{"__proto__":1}}', '/m~0n/__proto__'],
      ['a key that looks like an escape already', '{"~1":{"__proto__":1}}', '/~01/__proto__'],
      ['a key with both', '{"~/":{"__proto__":1}}', '/~0~1/__proto__'],
      ['the empty key', '{"":{"__proto__":1}}', '//__proto__'],
      ['array indexes', '[0,[1,2,{"__proto__":1}]]', '/1/2/__proto__'],
      ['indexes past commas inside strings', '["a,b",",,,",{"__proto__":1}]', '/2/__proto__'],
      ['indexes past commas of a nested array', '[[1,2,3],[4,5],{"__proto__":1}]', '/2/__proto__'],
      ['indexes past commas of a nested object', '[{"a":1,"b":2},{"__proto__":1}]', '/1/__proto__'],
      ['a key after an array value', '{"a":[1,2,3],"b":{"__proto__":1}}', '/b/__proto__'],
      ['a key after a string value holding a colon', '{"a":"x:y","b":{"__proto__":1}}', '/b/__proto__'],
      ['a key holding brackets and commas', '{"[a],{b}":{"__proto__":1}}', '/[a],{b}/__proto__'],
    ])('escapes and locates %s', (_name, text, pointer) => {
      expect(findings(text)).toEqual([['forbidden_key', pointer]]);
    });

    it('escapePointer escapes ~ before / (RFC 6901 §3)', () => {
      expect(escapePointer('a/b~c')).toBe('a~1b~0c');
      expect(escapePointer('~1')).toBe('~01');
      expect(escapePointer('/~')).toBe('~1~0');
      expect(escapePointer('')).toBe('');
    });
  });

  describe('the cap on findings', () => {
    it(`stops at ${MAX_FIELD_ERRORS} findings`, () => {
      expect(MAX_FIELD_ERRORS).toBe(20);
      const text = `{${Array.from({ length: 30 }, () => '"a":1').join(',')}}`;
      const found = findings(text);
      expect(found).toHaveLength(20);
      expect(new Set(found.map(([code, pointer]) => `${code} ${pointer}`))).toEqual(new Set(['duplicate_key /a']));
    });

    it('keeps exactly 20 when mixing kinds of findings past the cap', () => {
      const members = Array.from({ length: 15 }, (_, i) => `"k${i}":{"__proto__":1,"x":1,"x":2}`);
      const found = findings(`{${members.join(',')}}`);
      expect(found).toHaveLength(20);
      expect(found.slice(0, 4)).toEqual([
        ['forbidden_key', '/k0/__proto__'],
        ['duplicate_key', '/k0/x'],
        ['forbidden_key', '/k1/__proto__'],
        ['duplicate_key', '/k1/x'],
      ]);
      expect(found[19]).toEqual(['duplicate_key', '/k9/x']);
    });

    it('reports 19 findings and then the nesting error as the 20th', () => {
      const found = findings(`{${Array.from({ length: 20 }, () => '"a":1').join(',')},"deep":${arrays(40)}}`);
      expect(found).toHaveLength(20);
      expect(found[19]).toEqual(['nesting_too_deep', '/deep' + '/0'.repeat(31)]);
    });
  });
});
