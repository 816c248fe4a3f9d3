/**
 * Characters that make a spreadsheet read a cell as a formula (CWE-1236, OWASP "CSV injection"): = + - @, tab and
 * carriage return, and every character that Unicode compatibility normalisation (NFKC) turns into one of the four signs
 * (fullwidth ＝ ＋ － ＠, small ﹦ ﹢ ﹣ ﹫, super- and subscript ⁺ ⁼ ₊ ₌, ⩵, ⩶, ﬩), which some spreadsheet apps and
 * import steps apply (docs/decisions/0024-streamed-export.md).
 */
const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

/** Whether a cell starting with `first` (one UTF-16 unit; every such form is in the BMP) is read as a formula. */
function triggers(first: string): boolean {
  return FORMULA_TRIGGERS.has(first) || (first > '\x7f' && FORMULA_TRIGGERS.has(first.normalize('NFKC')[0]));
}

/** An optional ASCII sign, ASCII digits and an optional decimal part: what a spreadsheet reads as a number, not a formula. */
const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?$/;

/**
 * A cell as an export writes it: with a leading `'` when a spreadsheet would run it as a formula, so that `=cmd|…`
 * shows as text. Plain numbers stay as they are, so `telefone_e164` keeps its `+55…`. A cell whose own apostrophes
 * come before a formula character (`'=abc`, `''+55`) gets one more, so that the import, which takes exactly one off,
 * gives back what was stored.
 */
export function neutraliseFormula(cell: string): string {
  const afterApostrophes = cell.replace(/^'+/, '');
  return afterApostrophes.length > 0 && triggers(afterApostrophes[0]) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
}

/** An exported cell read back (`leads import`): the `'` neutraliseFormula added is taken off again. */
export function restoreFormula(cell: string): string {
  return cell.startsWith("'") && neutraliseFormula(cell.slice(1)) === cell ? cell.slice(1) : cell;
}
