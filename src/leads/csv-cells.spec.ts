import fc from 'fast-check';
import { neutraliseFormula, restoreFormula } from './csv-cells.js';

describe('neutraliseFormula (CWE-1236)', () => {
  it.each([
    ["=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"],
    ['=1+1', "'=1+1"],
    ['+1+1', "'+1+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\r=1+1"],
    ['+55 (11) 98765-4321', "'+55 (11) 98765-4321"],
    ['-', "'-"],
    ['+', "'+"],
    ['-1e5', "'-1e5"],
    ['+.5', "'+.5"],
    ['-3.', "'-3."],
    ['+5511987654321\n', "'+5511987654321\n"],
    ['\uff1dcmd', "'\uff1dcmd"],
    ['\uff0b1\uff0b1', "'\uff0b1\uff0b1"],
    ['\uff0d2', "'\uff0d2"],
    ['\uff20SUM(A1)', "'\uff20SUM(A1)"],
    // The small forms, which NFKC folds to = + - @ as it does the fullwidth ones.
    ["\ufe66cmd|' /C calc'!A0", "'\ufe66cmd|' /C calc'!A0"],
    ['\ufe621\ufe621', "'\ufe621\ufe621"],
    ['\ufe632+3', "'\ufe632+3"],
    ['\ufe6bSUM(A1)', "'\ufe6bSUM(A1)"],
    ['\u207a1', "'\u207a1"],
    ['\u207ccmd', "'\u207ccmd"],
    ['\u208a1', "'\u208a1"],
    ['\u208ccmd', "'\u208ccmd"],
    ['\u2a75cmd', "'\u2a75cmd"],
    ['\u2a76cmd', "'\u2a76cmd"],
    ['\ufb291', "'\ufb291"],
    ["'=already quoted", "''=already quoted"],
    ["''+55 11", "'''+55 11"],
  ])('prefixes %j', (cell, expected) => {
    expect(neutraliseFormula(cell)).toBe(expected);
  });

  it.each([
    '+5511987654321',
    '-3.5',
    '+0',
    '-42',
    '12.50',
    '',
    'Maria',
    "'plain",
    "'",
    ' =1+1',
    'a=1+1',
    'maria@example.com',
    '5511-98765',
    '\n=1',
    '\u2212 1',
    '\u00e9=1',
    '\ud83d',
  ])('keeps %j', (cell) => {
    expect(neutraliseFormula(cell)).toBe(cell);
  });
});

describe('restoreFormula (an exported cell read back by leads import)', () => {
  it.each([
    "=cmd|' /C calc'!A0",
    '+55 (11) 98765-4321',
    '-',
    '\uff1dcmd',
    '\ufe66cmd',
    '\ufe621',
    '\ufe632',
    '\ufe6bSUM(A1)',
    '+5511987654321',
    'Maria',
    '',
    "'",
    "'plain",
    ' =1+1',
  ])('undoes neutraliseFormula on %j', (cell) => {
    expect(restoreFormula(neutraliseFormula(cell))).toBe(cell);
  });

  it.each(["'", "'plain", "'+5511987654321", "''", "' =1"])('keeps %j, which no export neutralised', (cell) => {
    expect(restoreFormula(cell)).toBe(cell);
  });
});

describe('a cell exported and imported again (leads import)', () => {
  // Apostrophes of its own before a formula character are what the import used to take off; the rest is any text.
  const apostrophes = fc.constantFrom('', "'", "''", "'''");
  const first = fc.constantFrom('', '=', '+', '-', '@', '\t', '\r', '\uff1d', '\uff0b', '\uff0d', '\uff20', ' ', '5');
  const cell = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.tuple(apostrophes, first, fc.string()).map((parts) => parts.join('')),
  );

  it('comes back as it was, whatever its text', () => {
    fc.assert(
      fc.property(cell, (value) => restoreFormula(neutraliseFormula(value)) === value),
      { numRuns: 2000, examples: [["'=abc"], ["'@home"], ["'+55 11"], ["''=abc"], ["'+5511987654321"], ["'"]] },
    );
  });

  it.each(["'=abc", "'@home", "'+55 11", "''=abc", "'\uff1dabc"])('%j keeps the apostrophe it had', (value) => {
    expect(restoreFormula(neutraliseFormula(value))).toBe(value);
  });
});
