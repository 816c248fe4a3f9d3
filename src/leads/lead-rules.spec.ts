import {
  compatibilityCharacter,
  CONSENT_INVISIBLE_CHARACTER,
  CONSENT_MARK_RUN,
  CONSENT_MAX_MARKS,
  fieldFailure,
  foldEmail,
  LEAD_FIELD_NAMES,
  nfc,
  normaliseEmail,
  normaliseField,
} from './lead-rules.js';

/** Every code point but the surrogates, as a one-character string. */
function* everyCharacter(): Generator<string> {
  for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xd800 || cp > 0xdfff) yield String.fromCodePoint(cp);
}

describe('addresses with compatibility characters (issue 32)', () => {
  it.each([
    ['\u212Aate@exemplo.com.br', '\u212A'], // KELVIN SIGN, which NFC alone turns into K
    ['\uFF4Bate@exemplo.com.br', '\uFF4B'], // fullwidth k
    ['ana@\uFB01rma.com.br', '\uFB01'], // the ligature fi
    ['\u017Fara@exemplo.com.br', '\u017F'], // long s
    ['ana\u00B2@exemplo.com.br', '\u00B2'], // superscript two
    ['\u03F4eo@exemplo.gr', '\u03F4'], // capital theta symbol, which lower-cases to θ
  ])('refuses %j as invalid_format, naming %j', (email, character) => {
    expect(compatibilityCharacter(email)).toBe(character);
    expect(fieldFailure('email', email)).toBe('invalid_format');
  });

  it.each(['kate@exemplo.com.br', 'JOÃO@Exemplo.com.br', 'joa\u0303o@exemplo.com.br', 'θeo@exemplo.gr', '用户@例子.中国', 'ñandú@ñandú.com.ar', 'ß@straße.de'])(
    'accepts %j',
    (email) => {
      expect(compatibilityCharacter(email)).toBeUndefined();
      expect(fieldFailure('email', email)).toBeUndefined();
    },
  );

  it('folds an address stored before with one to itself (domain lower-cased), never to the address it looks like', () => {
    expect(foldEmail('\u03F4eo@Exemplo.gr')).toBe('\u03F4eo@exemplo.gr');
    expect(foldEmail('\u03F4eo@exemplo.gr')).not.toBe(foldEmail('θeo@exemplo.gr'));
    expect(foldEmail('\uFF2Bate@exemplo.com.br')).not.toBe(foldEmail('\uFF4Bate@exemplo.com.br'));
    expect(foldEmail('Kate@Exemplo.com.br')).toBe('kate@exemplo.com.br');
  });

  it('no address without one folds to a form that holds one, so a stored compatibility address matches only itself', () => {
    // foldEmail lower-cases an address without compatibility characters: no lower-case mapping of such a character
    // yields one, so the two kinds of fold never meet.
    const crossing = [...everyCharacter()].filter((c) => compatibilityCharacter(c) === undefined && compatibilityCharacter(c.toLowerCase()) !== undefined);
    expect(crossing).toEqual([]);
  });

  it('keeps the stored form of an ordinary address', () => {
    expect(normaliseEmail('  Jose\u0301@Exemplo.COM ')).toBe('José@exemplo.com');
  });
});

describe('consent wordings: what two wordings that look the same may not differ by', () => {
  it.each([
    ['a zero-width space', 'Aceito\u200B receber'],
    ['a word joiner', 'Aceito\u2060receber'],
    ['U+FEFF inside', 'Aceito \uFEFFreceber'],
    ['a soft hyphen', 'comuni\u00ADcações'],
    ['a Hangul filler', 'Aceito \u3164receber'],
    ['a joiner between Latin letters', 'Acei\u200Dto'],
    ['a non-joiner between Latin letters', 'Acei\u200Cto'],
    ['a joiner at the start', '\u200DAceito'],
  ])('refuses %s', (_name, text) => {
    expect(CONSENT_INVISIBLE_CHARACTER.test(text)).toBe(true);
  });

  it.each([
    ['an emoji sequence', 'Eu 👩\u200D💻 aceito'],
    ['a skin-toned emoji sequence', '👍🏽\u200D'],
    ['Persian with its non-joiner', 'می\u200Cخواهم'],
    ['Devanagari with its joiner', 'क्\u200Dष'],
    ['plain Portuguese', 'Aceito receber comunicações.'],
  ])('takes %s', (_name, text) => {
    expect(CONSENT_INVISIBLE_CHARACTER.test(text)).toBe(false);
  });

  it(`refuses more than ${CONSENT_MAX_MARKS} combining marks on one character, and takes ${CONSENT_MAX_MARKS}`, () => {
    expect(CONSENT_MARK_RUN.test(`x${'\u0336'.repeat(CONSENT_MAX_MARKS + 1)}`)).toBe(true);
    expect(CONSENT_MARK_RUN.test(`x${'\u0336'.repeat(CONSENT_MAX_MARKS)} y\u0301`)).toBe(false);
    // Vietnamese, decomposed: two marks on a letter.
    expect(CONSENT_MARK_RUN.test('Vie\u0323\u0302t Nam')).toBe(false);
  });
});

describe('the ASCII fast path of normalisation (skips ICU for ASCII text)', () => {
  it('holds only while every ASCII character is its own NFC and NFKC (a Unicode or ICU update would fail here)', () => {
    for (let cp = 0; cp < 0x80; cp++) {
      const character = String.fromCharCode(cp);
      expect([character.normalize('NFC'), character.normalize('NFKC')]).toEqual([character, character]);
    }
  });

  it.each([
    ['e\u0301 acento', '\u00e9 acento'], // a decomposed é, composed
    ['Jose\u0301 da Silva', 'Jos\u00e9 da Silva'],
    ['\u212Aelvin', 'Kelvin'], // NFC's singleton: the Kelvin sign becomes K
    ['plain ascii', 'plain ascii'],
  ])('nfc(%j) is %j, as String.prototype.normalize gives it', (input, expected) => {
    expect(nfc(input)).toBe(expected);
    expect(nfc(input)).toBe(input.normalize('NFC'));
  });

  it('stores every field, and folds every address, as the full Unicode path would', () => {
    const values = [
      '  Maria   Fernanda Souza ',
      'Olá!\nPodem me ligar?',
      'Zo\u0308e Ma\u0301rio',
      'ana@E\u0301XEMPLO.com.br',
      'Ana@Exemplo.COM.br',
      '\u212Aate@x.com.br',
    ];
    for (const name of LEAD_FIELD_NAMES) {
      for (const value of values) {
        const slow = value.trim().normalize('NFC');
        const expected = name === 'email' ? slow.slice(0, slow.lastIndexOf('@')) + slow.slice(slow.lastIndexOf('@')).toLowerCase() : slow;
        const collapsed = name === 'nome' || name === 'empresa' ? expected.replace(/\s+/gu, ' ') : expected;
        expect(normaliseField(name, value)).toBe(collapsed);
      }
    }
    expect(foldEmail('Ana@Exemplo.COM.br')).toBe('ana@exemplo.com.br');
    expect(foldEmail('Ze\u0301@Exemplo.com.br')).toBe('z\u00e9@exemplo.com.br');
    expect(compatibilityCharacter('ana@exemplo.com.br')).toBeUndefined();
    expect(compatibilityCharacter('ana@\uFB01rma.com.br')).toBe('\uFB01');
    expect(compatibilityCharacter('\u{1D55C}ate@x.com.br')).toBe('\u{1D55C}'); // an astral one: 𝕜, mathematical k
  });
});
