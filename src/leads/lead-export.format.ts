import { stringify } from 'csv-stringify/sync';
import { neutraliseFormula } from './csv-cells.js';
import type { LeadRecord } from './lead-export.reader.js';
import { LEAD_VIEW_COLUMNS } from './lead-reader.service.js';

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

/** How one export writes its rows: the first chunk, then one chunk per page of rows. */
export interface ExportWriter {
  format: ExportFormat;
  mediaType: string;
  extension: string;
  head(): string;
  rows(records: LeadRecord[]): string;
}

/**
 * CSV per RFC 4180: UTF-8, a header row (the LeadView member names, LEAD_VIEW_COLUMNS), CRLF line ends, fields quoted when they hold the delimiter, a quote or a line
 * break, and every cell that a spreadsheet would run as a formula neutralised (CWE-1236). The `;` profile is what
 * spreadsheets in pt-BR locales open directly: semicolons and a UTF-8 byte order mark.
 */
export function csvWriter(delimiter: CsvDelimiter): ExportWriter {
  const options = { delimiter, record_delimiter: 'windows', quoted_match: LINE_BREAK, cast: { string: neutraliseFormula } } as const;
  return {
    format: 'csv',
    mediaType: CSV_MEDIA_TYPE,
    extension: 'csv',
    head: () => (delimiter === ';' ? UTF8_BOM : '') + stringify([[...LEAD_VIEW_COLUMNS]], options),
    rows: (records) => stringify(records, options),
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
function leadView(record: LeadRecord): Record<string, string | null> {
  const view: Record<string, string | null> = {};
  for (let i = 0; i < LEAD_VIEW_COLUMNS.length; i++) view[LEAD_VIEW_COLUMNS[i]] = record[i];
  return view;
}
