// Tables on a terminal (`leads list`, `leads webhooks list` and `deliveries`): the columns that fit its width, long
// values cut with an ellipsis.

export interface LeadRow {
  id: string;
  received_at: string;
  [field: string]: unknown;
}

/** A column: its heading, its widest width, and its value when that is not the field of its name. */
export interface Column<Row> {
  name: string;
  max: number;
  value?: (row: Row) => unknown;
}

/** Columns in the order they are dropped from the right when the terminal is narrow, with their widest width. */
const LEAD_COLUMNS: Column<LeadRow>[] = [
  { name: 'received_at', max: 20, value: (lead) => lead.received_at.replace('T', ' ').replace(/\.\d+/, '') },
  { name: 'nome', max: 28 },
  { name: 'email', max: 32 },
  { name: 'telefone', max: 18, value: (lead) => lead.telefone_e164 ?? lead.telefone },
  { name: 'empresa', max: 24 },
  { name: 'origem', max: 16 },
  { name: 'channel', max: 7 },
  { name: 'mensagem', max: 40 },
  { name: 'id', max: 36 },
];
const GAP = '  ';

/**
 * Lead data comes from anyone who filled a form: control characters (escape sequences would drive the operator's
 * terminal) and line breaks are shown as spaces.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
export const printable = (value: unknown) => (value === null || value === undefined ? '' : String(value).replace(CONTROL, ' '));

function cut(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text + ' '.repeat(width - chars.length);
  return `${chars.slice(0, width - 1).join('')}…`;
}

/** The lines of a table of `leads` no wider than `width` (at least the first column is shown). */
export function formatTable(leads: LeadRow[], width: number): string[] {
  return formatRows(leads, LEAD_COLUMNS, width);
}

/**
 * The lines of a table of `rows` no wider than `width`: columns that do not fit are left out (never the first). Each
 * column is as wide as its widest value (at most its `max`), or always its `max` when `fixed`, so that tables printed
 * page by page line up.
 */
export function formatRows<Row extends object>(rows: Row[], columns: Column<Row>[], width: number, fixed = false): string[] {
  const cells = columns.map((column) => rows.map((row) => printable(column.value ? column.value(row) : (row as Record<string, unknown>)[column.name])));
  const widths = columns.map((column, c) =>
    fixed ? column.max : Math.min(column.max, Math.max(column.name.length, ...cells[c].map((text) => Array.from(text).length))),
  );
  const shown: number[] = [];
  let used = 0;
  for (let c = 0; c < columns.length; c++) {
    const extra = (shown.length ? GAP.length : 0) + widths[c];
    if (shown.length && used + extra > width) continue;
    shown.push(c);
    used += extra;
  }
  const line = (texts: string[]) =>
    shown
      .map((c) => cut(texts[c], widths[c]))
      .join(GAP)
      .trimEnd();
  return [
    line(columns.map((column) => column.name)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((_, row) => line(cells.map((column) => column[row]))),
  ];
}
