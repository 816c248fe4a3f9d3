import { IsIn, IsOptional } from 'class-validator';
import { invalidQuery } from '../problem/app-error.js';
import { CsvDelimiter, csvWriter, ExportFormat, ExportWriter, jsonLinesWriter } from './lead-export.format.js';
import { LeadFilterQuery, leadFilterOf } from './lead-list-query.dto.js';
import type { LeadFilter } from './lead-reader.service.js';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'jsonl'];
export const CSV_DELIMITERS: readonly CsvDelimiter[] = [',', ';'];

/**
 * GET /api/v1/leads/export's query: the list's filters (same rules, same 400 invalid_query naming the parameter),
 * `format` and, for CSV, `delimiter`.
 */
export class LeadExportQuery extends LeadFilterQuery {
  @IsOptional() @IsIn(EXPORT_FORMATS, { message: 'format must be csv or jsonl.' }) format?: ExportFormat;

  @IsOptional()
  @IsIn(CSV_DELIMITERS, { message: 'delimiter must be , (the default) or ; (semicolons and a UTF-8 BOM, for spreadsheets in pt-BR locales).' })
  delimiter?: CsvDelimiter;
}

export interface ExportRequest {
  filter: LeadFilter;
  writer: ExportWriter;
  delimiter?: CsvDelimiter;
}

/** The filter and the writer an export query asks for; CSV when no format is given. */
export function exportRequestOf(query: LeadExportQuery): ExportRequest {
  const filter = leadFilterOf(query);
  if (query.format === 'jsonl') {
    if (query.delimiter !== undefined) {
      throw invalidQuery([{ parameter: 'delimiter', code: 'invalid_format', detail: 'delimiter applies to format=csv only; leave it out for jsonl.' }]);
    }
    return { filter, writer: jsonLinesWriter() };
  }
  const delimiter = query.delimiter ?? ',';
  return { filter, writer: csvWriter(delimiter), delimiter };
}
