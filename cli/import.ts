// `leads import <file.csv|file.jsonl>`: one POST /api/v1/lead per row with an Idempotency-Key derived from the row.
import { createHash } from 'node:crypto';
import { LEAD_FIELD_NAMES, REQUIRED_LEAD_FIELDS } from '../src/leads/lead-rules.js';
import { CliError, EXIT, HttpResponse, asProblem, exitCodeFor } from './http.js';

export interface ImportRow {
  /** 1-based number of the data row: CSV records after the header, non-blank JSONL lines. */
  row: number;
  fields?: Record<string, unknown>;
  /** Why the row could not even be read (bad JSON, wrong column count). */
  error?: string;
}

/** RFC 4180: comma-separated, fields optionally in double quotes, "" inside quotes, CRLF or LF line ends. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let fieldStarted = false;
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      fieldStarted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
      fieldStarted = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      if (!(record.length === 1 && record[0] === '' && !fieldStarted)) records.push(record);
      record = [];
      field = '';
      fieldStarted = false;
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (quoted) throw new CliError('CSV: a quoted field is not closed before the end of the file', EXIT.invalid);
  if (fieldStarted || field !== '' || record.length) {
    record.push(field);
    records.push(record);
  }
  return records;
}

export function readRows(name: string, text: string): ImportRow[] {
  const isCsv = name.toLowerCase().endsWith('.csv') || (!name.toLowerCase().endsWith('.jsonl') && !text.trimStart().startsWith('{'));
  return isCsv ? csvRows(text) : jsonlRows(text);
}

function csvRows(text: string): ImportRow[] {
  const [header, ...records] = parseCsv(text);
  if (!header) throw new CliError('CSV: the file is empty; the first row must name the columns', EXIT.invalid);
  const columns = header.map((name) => name.trim());
  const unknown = columns.filter((name) => !(LEAD_FIELD_NAMES as string[]).includes(name));
  if (unknown.length) {
    throw new CliError(`CSV: unknown column(s) ${unknown.join(', ')}; the header may only name ${LEAD_FIELD_NAMES.join(', ')}`, EXIT.invalid);
  }
  if (REQUIRED_LEAD_FIELDS.some((name) => !columns.includes(name))) {
    throw new CliError(`CSV: the header must include ${REQUIRED_LEAD_FIELDS.join(' and ')}`, EXIT.invalid);
  }
  return records.map((cells, index) => {
    const row = index + 1;
    if (cells.length !== columns.length) return { row, error: `expected ${columns.length} columns, found ${cells.length}` };
    const fields: Record<string, unknown> = {};
    columns.forEach((column, c) => {
      if (cells[c] !== '') fields[column] = cells[c];
    });
    return { row, fields };
  });
}

function jsonlRows(text: string): ImportRow[] {
  const rows: ImportRow[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const row = rows.length + 1;
    try {
      const value = JSON.parse(line) as unknown;
      if (!value || typeof value !== 'object' || Array.isArray(value)) rows.push({ row, error: 'not a JSON object' });
      else rows.push({ row, fields: value as Record<string, unknown> });
    } catch (error) {
      rows.push({ row, error: `invalid JSON (${(error as Error).message})` });
    }
  }
  return rows;
}

/** The row's content as normalised JSON: keys sorted, strings trimmed, empty strings dropped. Nothing about the file or the caller. */
export function normaliseRow(fields: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields).sort()) {
    const value = typeof fields[key] === 'string' ? (fields[key] as string).trim().normalize('NFC') : fields[key];
    if (value !== '' && value !== undefined) out[key] = value;
  }
  return JSON.stringify(out);
}

export function idempotencyKey(fields: Record<string, unknown>): string {
  return `import-${createHash('sha256').update(normaliseRow(fields)).digest('hex')}`;
}

export type RowOutcome =
  { row: number; status: 'stored' | 'replayed'; id: string } | { row: number; status: 'failed'; reason: string; exitCode: number; problem?: unknown };

/** Failed-row reason: the problem's code and detail, and its field errors. */
export function failureReason(response: HttpResponse): string {
  const problem = asProblem(response);
  if (!problem?.code) return `HTTP ${response.status}`;
  const fields = (problem.errors ?? []).map((e) => `${e.pointer || '(body)'}: ${e.detail ?? e.code}`);
  return `${problem.code}${fields.length ? ` (${fields.join('; ')})` : problem.detail ? `: ${problem.detail}` : ''}`;
}

export function outcomeOf(row: number, response: HttpResponse, sentAt: number): RowOutcome {
  if (response.status === 201 || response.status === 200) {
    const receipt = response.body as { id: string; received_at: string };
    // The service answers a replay with the first receipt: a lead received before this request was sent is a replay.
    const flagged = response.headers.get('idempotent-replayed') ?? response.headers.get('idempotency-replayed');
    const replayed = flagged !== null ? flagged === 'true' || flagged === '?1' : Date.parse(receipt.received_at) < sentAt - 50;
    return { row, status: replayed ? 'replayed' : 'stored', id: receipt.id };
  }
  return { row, status: 'failed', reason: failureReason(response), exitCode: exitCodeFor(response.status), problem: response.body };
}

/** A progress bar on a terminal: `[#####-----] 12/40  10 ok  2 failed`. */
export function progressBar(done: number, total: number, ok: number, failed: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}  ${ok} ok  ${failed} failed`;
}
