import { stringify } from 'csv-stringify/sync';
import { localDateTimeFormatter } from '../time/time-zone.js';
import { neutraliseFormula } from './csv-cells.js';
import { PT_BR_HEADERS } from './lead-export.headers.js';
import { LeadRecord, RECORD_COLUMNS } from './lead-export.reader.js';
import { CONTEXT_MEMBERS, LeadContext } from './lead-context.js';
import { LEAD_VIEW_COLUMNS } from './lead-reader.service.js';
import { LEGAL_BASIS_CATEGORIES, LegalBasisView } from './legal-bases.js';

export type ExportFormat = 'csv' | 'jsonl';
export type CsvDelimiter = ',' | ';';

export const CSV_MEDIA_TYPE = 'text/csv; charset=utf-8; header=present';
/** The JSON Lines media type (jsonlines.org); `application/x-ndjson` names the same format (docs/decisions/0024-streamed-export.md). */
export const JSONL_MEDIA_TYPE = 'application/jsonl';

const UTF8_BOM = '\ufeff';
/**
 * RFC 4180 §2.6: a field with a line break is quoted. csv-stringify quotes a field holding the record delimiter (CRLF)
 * but not a lone CR or LF, so those are named here.
 */
const LINE_BREAK = /[\r\n]/;

const BASIS_MEMBERS = ['type', 'status', 'recorded_at', 'revoked_at'] as const;
const LEGAL_BASES = LEAD_VIEW_COLUMNS.indexOf('legal_bases');
const CONTEXT = LEAD_VIEW_COLUMNS.indexOf('context');
/** The LeadView members that are plain values, in order: every member but the two JSON ones, which come last. */
const PLAIN_COLUMNS = LEAD_VIEW_COLUMNS.slice(0, Math.min(LEGAL_BASES, CONTEXT));
const VERDICT = RECORD_COLUMNS.indexOf('screening_verdict');
const REASONS = RECORD_COLUMNS.indexOf('screening_reasons');
const DECIDED_BY = RECORD_COLUMNS.indexOf('screening_decided_by');
const DECIDED_AT = RECORD_COLUMNS.indexOf('screening_decided_at');

/**
 * The CSV columns: the LeadView's plain members, then each context member under its own name (so an export's file
 * imports again with `leads import`), then each legal basis category's type, status, recorded_at and revoked_at, the
 * SHA-256 of the consent wording, and the screening verdict with its reasons (space-separated), who decided it and when.
 */
export const CSV_COLUMNS = [
  ...PLAIN_COLUMNS,
  ...CONTEXT_MEMBERS,
  ...LEGAL_BASIS_CATEGORIES.flatMap((category) => BASIS_MEMBERS.map((member) => `${category}_${member}`)),
  'consent_text_sha256',
  'screening_verdict',
  'screening_reasons',
  'screening_decided_by',
  'screening_decided_at',
] as const;

export type CsvColumn = (typeof CSV_COLUMNS)[number];

/** The date-time columns, which the pt-BR profile writes on the team's clock. */
const DATE_TIME_COLUMNS = new Set<string>([
  'received_at',
  'screening_decided_at',
  ...LEGAL_BASIS_CATEGORIES.flatMap((category) => [`${category}_recorded_at`, `${category}_revoked_at`]),
]);

/** A record's CSV cells, in CSV_COLUMNS order. */
function csvCells(record: LeadRecord): (string | null)[] {
  const cells = record.slice(0, PLAIN_COLUMNS.length);
  const context = record[CONTEXT] === null ? undefined : (JSON.parse(record[CONTEXT]) as LeadContext);
  for (const member of CONTEXT_MEMBERS) cells.push(context?.[member] ?? null);
  const bases = record[LEGAL_BASES] === null ? [] : (JSON.parse(record[LEGAL_BASES]) as LegalBasisView[]);
  for (const category of LEGAL_BASIS_CATEGORIES) {
    const basis = bases.find((entry) => entry.category === category);
    for (const member of BASIS_MEMBERS) cells.push(basis?.[member] ?? null);
  }
  cells.push(bases.find((basis) => basis.consent_text_sha256 !== null)?.consent_text_sha256 ?? null);
  cells.push(record[VERDICT], (JSON.parse(record[REASONS] ?? '[]') as string[]).join(' '), record[DECIDED_BY], record[DECIDED_AT]);
  return cells;
}

/** How one export writes its rows: the first chunk, then one chunk per page of rows. */
export interface ExportWriter {
  format: ExportFormat;
  mediaType: string;
  extension: string;
  head(): string;
  rows(records: LeadRecord[]): string;
}

/**
 * CSV per RFC 4180: UTF-8, a header row, CRLF line ends, fields quoted when they hold the delimiter, a quote or a line
 * break, and every cell that a spreadsheet would run as a formula neutralised (CWE-1236); `columns` in their order.
 * The `,` profile is the technical one: member names in the header, date-times as the read API writes them. The `;`
 * profile is what spreadsheets in pt-BR locales open directly: semicolons, a UTF-8 byte order mark, Portuguese
 * headers (PT_BR_HEADERS) and date-times `dd/mm/aaaa hh:mm:ss` on the clock of `timeZone`, which they read as dates.
 */
export function csvWriter(delimiter: CsvDelimiter, columns: readonly CsvColumn[], timeZone: string): ExportWriter {
  const options = { delimiter, record_delimiter: 'windows', quoted_match: LINE_BREAK, cast: { string: neutraliseFormula } } as const;
  const ptBr = delimiter === ';';
  const header = ptBr ? columns.map((column) => PT_BR_HEADERS[column]) : [...columns];
  // One formatter per export: it keeps the offsets it has looked up.
  const cells = cellsOf(columns, ptBr ? localDateTimeFormatter(timeZone) : undefined);
  return {
    format: 'csv',
    mediaType: CSV_MEDIA_TYPE,
    extension: 'csv',
    head: () => (ptBr ? UTF8_BOM : '') + stringify([header], options),
    rows: (records) => stringify(records.map(cells), options),
  };
}

/** How a record becomes the cells of `columns`; every column as it stands is today's technical form, untouched. */
function cellsOf(columns: readonly CsvColumn[], dateTime?: (instant: number) => string): (record: LeadRecord) => (string | null)[] {
  const indexes = columns.map((column) => CSV_COLUMNS.indexOf(column));
  const every = indexes.length === CSV_COLUMNS.length && indexes.every((index, i) => index === i);
  const dates = dateTime ? indexes.flatMap((index, i) => (DATE_TIME_COLUMNS.has(CSV_COLUMNS[index]) ? [i] : [])) : [];
  if (every && !dates.length) return csvCells;
  // A record starts with the plain members in CSV order: with none of the others, no JSON is parsed.
  const plainOnly = indexes.every((index) => index < PLAIN_COLUMNS.length);
  return (record) => {
    // A new array either way (the record is the reader's), so the date-times are written into it in place.
    let cells: (string | null)[];
    if (every) cells = csvCells(record);
    else {
      const source = plainOnly ? record : csvCells(record);
      cells = indexes.map((index) => source[index]);
    }
    for (const i of dates) if (cells[i] !== null) cells[i] = dateTime!(Date.parse(cells[i]!));
    return cells;
  };
}

/** JSON Lines: one lead a line, exactly as the read API shows it (data, not a spreadsheet: nothing is neutralised). */
export function jsonLinesWriter(): ExportWriter {
  return {
    format: 'jsonl',
    mediaType: JSONL_MEDIA_TYPE,
    extension: 'jsonl',
    head: () => '',
    rows: (records) => {
      let chunk = '';
      for (const record of records) chunk += `${JSON.stringify(leadView(record))}\n`;
      return chunk;
    },
  };
}

/** A record as the LeadView object the read API answers, members in the same order. */
function leadView(record: LeadRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (let i = 0; i < PLAIN_COLUMNS.length; i++) view[LEAD_VIEW_COLUMNS[i]] = record[i];
  view.legal_bases = record[LEGAL_BASES] === null ? [] : JSON.parse(record[LEGAL_BASES]);
  view.context = record[CONTEXT] === null ? {} : JSON.parse(record[CONTEXT]);
  view.screening = {
    verdict: record[VERDICT],
    reasons: JSON.parse(record[REASONS] ?? '[]'),
    decided_by: record[DECIDED_BY],
    decided_at: record[DECIDED_AT],
  };
  return view;
}
