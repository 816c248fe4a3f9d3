import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { invalidQuery } from '../problem/app-error.js';
import { CSV_COLUMNS, CsvColumn, CsvDelimiter, csvWriter, ExportFormat, ExportWriter, jsonLinesWriter } from './lead-export.format.js';
import { PT_BR_DEFAULT_COLUMNS } from './lead-export.headers.js';
import { LeadFilterQuery, leadFilterOf } from './lead-list-query.dto.js';
import type { LeadFilter } from './lead-reader.service.js';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'jsonl'];
export const CSV_DELIMITERS: readonly CsvDelimiter[] = [',', ';'];

/** Every column named once, with commas and `all`, is far below this; a longer value is refused before it is read. */
const COLUMNS_MAX_LENGTH = 1000;
const COLUMNS = `columns must be all, or a comma list of column names (${CSV_COLUMNS.join(', ')}), each once.`;

/**
 * GET /api/v1/leads/export's query: the list's filters (same rules, same 400 invalid_query naming the parameter),
 * `format` and, for CSV, `delimiter` and `columns`.
 */
export class LeadExportQuery extends LeadFilterQuery {
  @IsOptional() @IsIn(EXPORT_FORMATS, { message: 'format must be csv or jsonl.' }) format?: ExportFormat;

  @IsOptional()
  @IsIn(CSV_DELIMITERS, { message: 'delimiter must be , (the default) or ; (semicolons and a UTF-8 BOM, for spreadsheets in pt-BR locales).' })
  delimiter?: CsvDelimiter;

  @IsOptional() @IsString() @MinLength(1, { message: COLUMNS }) @MaxLength(COLUMNS_MAX_LENGTH, { message: COLUMNS }) columns?: string;
}

export interface ExportRequest {
  filter: LeadFilter;
  writer: ExportWriter;
  delimiter?: CsvDelimiter;
}

/**
 * The filter and the writer an export query asks for: CSV when no format is given, with every column for `,` and
 * PT_BR_DEFAULT_COLUMNS for `;` unless `columns` names them. A plain date in a filter is a day in `timeZone`, which
 * is also the clock of the `;` profile's date-times.
 */
export function exportRequestOf(query: LeadExportQuery, timeZone: string): ExportRequest {
  const filter = leadFilterOf(query, timeZone);
  if (query.format === 'jsonl') {
    // JSON Lines are every member of every lead, as the read API shows it: there is nothing for these to choose.
    const csvOnly = (['delimiter', 'columns'] as const).filter((parameter) => query[parameter] !== undefined);
    if (csvOnly.length) {
      throw invalidQuery(
        csvOnly.map((parameter) => ({ parameter, code: 'invalid_format', detail: `${parameter} applies to format=csv only; leave it out for jsonl.` })),
      );
    }
    return { filter, writer: jsonLinesWriter() };
  }
  const delimiter = query.delimiter ?? ',';
  const columns = query.columns !== undefined ? columnsOf(query.columns) : delimiter === ';' ? PT_BR_DEFAULT_COLUMNS : CSV_COLUMNS;
  return { filter, writer: csvWriter(delimiter, columns, timeZone), delimiter };
}

const KNOWN_COLUMNS = new Set<string>(CSV_COLUMNS);

/** `all`, or column names separated by commas (spaces around a name are ignored), each once, in the order given. */
function columnsOf(text: string): readonly CsvColumn[] {
  if (text.trim() === 'all') return CSV_COLUMNS;
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !KNOWN_COLUMNS.has(name));
  const repeated = names.filter((name, i) => KNOWN_COLUMNS.has(name) && names.indexOf(name) !== i);
  if (unknown.length || repeated.length) {
    const problems = [
      ...(unknown.length ? [`unknown: ${unknown.map((name) => JSON.stringify(name)).join(', ')}`] : []),
      ...(repeated.length ? [`named twice: ${[...new Set(repeated)].join(', ')}`] : []),
    ];
    throw invalidQuery([{ parameter: 'columns', code: 'invalid_format', detail: `${COLUMNS.slice(0, -1)}; ${problems.join('; ')}.` }]);
  }
  return names as CsvColumn[];
}
