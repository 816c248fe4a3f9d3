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
  ])('prefixes %j', (cell, expected) => {
    expect(neutraliseFormula(cell)).toBe(expected);
  });

  it.each(['+5511987654321', '-3.5', '+0', '-42', '12.50', '', 'Maria', "'=already quoted", ' =1+1', 'a=1+1', 'maria@example.com', '5511-98765', '\n=1'])(
    'keeps %j',
    (cell) => {
      expect(neutraliseFormula(cell)).toBe(cell);
    },
  );
});

describe('restoreFormula (an exported cell read back by leads import)', () => {
  it.each(["=cmd|' /C calc'!A0", '+55 (11) 98765-4321', '-', '\uff1dcmd', '+5511987654321', 'Maria', '', "'", "'plain", ' =1+1'])(
    'undoes neutraliseFormula on %j',
    (cell) => {
      expect(restoreFormula(neutraliseFormula(cell))).toBe(cell);
    },
  );

  it.each(["'", "'plain", "'+5511987654321", "''=1"])('keeps %j, which no export neutralised', (cell) => {
    expect(restoreFormula(cell)).toBe(cell);
  });
});
