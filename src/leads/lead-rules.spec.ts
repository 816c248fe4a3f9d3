import { compatibilityCharacter, fieldFailure, foldEmail, normaliseEmail } from './lead-rules.js';

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
