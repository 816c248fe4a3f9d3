// `leads import <file.csv|file.jsonl>`: the file streamed row by row (csv-parse for CSV), each row sent once to
// POST /api/v1/lead with an Idempotency-Key derived from the row, a bounded number of sends in flight.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, createReadStream, fstatSync, openSync, readSync, ReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { restoreFormula } from '../src/leads/csv-cells.js';
import { CONTEXT_MEMBERS } from '../src/leads/lead-context.js';
import { PT_BR_HEADERS } from '../src/leads/lead-export.headers.js';
import { LEAD_FIELD_NAMES, REQUIRED_LEAD_FIELDS, fieldFailure, normaliseField } from '../src/leads/lead-rules.js';
import { UsageError } from './args.js';
import { CliError, EXIT, HttpResponse, asProblem, exitCodeFor } from './http.js';

export interface ImportRow {
  /** 1-based number of the data row: CSV records after the header, non-blank JSONL lines. */
  row: number;
  /** 1-based line of the file where the row starts. */
  line: number;
  fields?: Record<string, unknown>;
  /** Why the row could not even be read (bad JSON, wrong column count, a quote left open). */
  error?: string;
}

/** The CSV columns an import reads: the lead fields, and the context members, which fill `context` (legal bases come only through JSON Lines). */
const CSV_COLUMNS: readonly string[] = [...LEAD_FIELD_NAMES, ...CONTEXT_MEMBERS];
const CONTEXT_COLUMNS: ReadonlySet<string> = new Set(CONTEXT_MEMBERS);
/**
 * Every column of an export (GET /api/v1/leads/export), by the name either profile gives it: the member's own name
 * (`delimiter=,`, and `;` before its headers were Portuguese) or its pt-BR header. The member names an import does not
 * take are read and left out, with one note.
 */
const EXPORT_COLUMNS: ReadonlyMap<string, string> = new Map([
  ...Object.keys(PT_BR_HEADERS).map((member) => [member, member] as const),
  ...Object.entries(PT_BR_HEADERS).map(([member, header]) => [header, member] as const),
]);
/**
 * Members of an exported lead (a LeadView line of JSON Lines) that the service sets, or whose evidence (when, through
 * which channel, which wording) an import cannot restate: `legal_bases` sent again would be recorded as given now.
 */
const VIEW_ONLY_MEMBERS: ReadonlySet<string> = new Set([
  'id',
  'received_at',
  'telefone_e164',
  'channel',
  'registration_id',
  'client_id',
  'legal_bases',
  'screening',
]);

export interface RowSource {
  format: 'csv' | 'jsonl';
  /** The CSV delimiter, detected from the header line. */
  delimiter?: ',' | ';';
  rows: AsyncIterable<ImportRow>;
  /** Columns (CSV) or members (JSONL) of an export that were read and not sent, as the file names them; filled while reading. */
  ignored: Set<string>;
  /** The share of the file read so far, 0 to 1 (read-ahead included). */
  progress(): number;
}

/** A record (CSV) or line (JSONL) this long is refused, and the import stops there: memory stays bounded. */
export const MAX_RECORD_BYTES = 1024 * 1024;
const HEAD_BYTES = 64 * 1024;
const NOT_UTF8 = 'not valid UTF-8 (save the file as UTF-8; spreadsheets call it "CSV UTF-8")';

/** Opens `file` and tells CSV (by extension, or a first character other than `{`) from JSONL; the rows are read lazily. */
export function openRows(file: string): RowSource {
  let head: string;
  let size: number;
  try {
    const fd = openSync(file, 'r');
    try {
      size = fstatSync(fd).size;
      const buffer = Buffer.alloc(HEAD_BYTES);
      head = buffer.toString('utf8', 0, readSync(fd, buffer, 0, HEAD_BYTES, 0)).replace(/^\uFEFF/, '');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const name = file.toLowerCase();
  const isCsv = name.endsWith('.csv') || (!name.endsWith('.jsonl') && !head.trimStart().startsWith('{'));
  const stream = createReadStream(file, { highWaterMark: HEAD_BYTES });
  const progress = () => (size === 0 ? 1 : Math.min(1, stream.bytesRead / size));
  const ignored = new Set<string>();
  if (!isCsv) return { format: 'jsonl', rows: jsonlRows(stream, ignored), progress, ignored };
  const delimiter = detectDelimiter(head);
  return { format: 'csv', delimiter, rows: csvRows(stream, delimiter, ignored), progress, ignored };
}

/** `;` when the header line has more semicolons than commas (column names contain neither): spreadsheets in pt-BR locales write `;`. */
export function detectDelimiter(head: string): ',' | ';' {
  const end = head.search(/[\r\n]/);
  const header = end === -1 ? head : head.slice(0, end);
  return header.split(';').length > header.split(',').length ? ';' : ',';
}

/** Line breaks in a record's raw text: CRLF, LF or CR each count once (csv-parse's own `info.lines` counts a quoted CRLF twice). */
function lineBreaks(raw: string): number {
  let count = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 10 || (c === 13 && raw.charCodeAt(i + 1) !== 10)) count++;
  }
  return count;
}

type Parsed = { record: string[]; raw: string } | { skipped: CsvError; raw?: string };

async function* csvRows(stream: ReadStream, delimiter: string, ignored: Set<string>): AsyncGenerator<ImportRow> {
  const parser = parse({
    delimiter,
    bom: true,
    raw: true,
    // RFC 4180 quoting; a quote inside an unquoted field is kept as text, as spreadsheets do.
    relax_quotes: true,
    // A wrong column count is reported per row below, with the counts.
    relax_column_count: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    max_record_size: MAX_RECORD_BYTES,
    // A record that cannot be parsed is handed on in its place (pushed in order with the records), and parsing goes on.
    skip_records_with_error: true,
    on_skip: (error, raw) => {
      // csv-parse drops the rest of its chunk after this error: the import stops here rather than skip rows unseen.
      if (!error) return undefined;
      if (error.code === 'CSV_MAX_RECORD_SIZE') throw error;
      parser.push({ skipped: error, raw } satisfies Parsed);
      return undefined;
    },
  });
  /** Each column's member, or undefined for one that is read and not sent. */
  let columns: (string | undefined)[] | undefined;
  let line = 1;
  let row = 0;
  try {
    for await (const item of pipeline(stream, parser, () => undefined) as AsyncIterable<Parsed>) {
      const start = line;
      line += lineBreaks(item.raw ?? '');
      if ('skipped' in item) {
        const reason = item.skipped.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quoted field is not closed before the end of the file' : item.skipped.message;
        if (!columns) throw new CliError(`CSV: the header (line ${start}) cannot be read: ${reason}`, EXIT.invalid);
        yield { row: ++row, line: start, error: reason };
        continue;
      }
      const { record } = item;
      if (record.length === 1 && record[0] === '') continue; // a blank line
      if (!columns) {
        columns = headerColumns(record, ignored);
        continue;
      }
      row++;
      if (item.raw.includes('\uFFFD')) yield { row, line: start, error: NOT_UTF8 };
      else if (record.length !== columns.length) yield { row, line: start, error: `expected ${columns.length} columns, found ${record.length}` };
      else {
        const fields: Record<string, unknown> = {};
        let context: Record<string, string> | undefined;
        for (let c = 0; c < columns.length; c++) {
          const member = columns[c];
          if (record[c] === '' || member === undefined) continue;
          // An export wrote `'` before a cell a spreadsheet would run as a formula (a telephone's leading +).
          const value = restoreFormula(record[c]);
          if (CONTEXT_COLUMNS.has(member)) (context ??= {})[member] = value;
          else fields[member] = value;
        }
        if (context) fields.context = context;
        yield { row, line: start, fields };
      }
    }
  } catch (error) {
    if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
      throw new CliError(`CSV: row ${row + 1} (line ${line}) is longer than ${MAX_RECORD_BYTES} bytes (is a quote left open?); stopped there`, EXIT.invalid);
    }
    throw error;
  } finally {
    stream.destroy();
  }
  if (!columns) throw new CliError('CSV: the file is empty; the first row must name the columns', EXIT.invalid);
}

/**
 * The member each header cell names (a member name, or an export's pt-BR header); undefined for an export's column that
 * an import does not send, which goes into `ignored`. Any other name stops the import: a typo is not skipped silently.
 */
function headerColumns(header: string[], ignored: Set<string>): (string | undefined)[] {
  const names = header.map((name) => name.trim().normalize('NFC'));
  const members = names.map((name) => (CSV_COLUMNS.includes(name) ? name : EXPORT_COLUMNS.get(name)));
  const unknown = names.filter((_, i) => members[i] === undefined);
  if (unknown.length) {
    throw new CliError(
      `CSV: unknown column(s) ${unknown.join(', ')}; the header may name ${CSV_COLUMNS.join(', ')} (or their pt-BR export headers), and an export's other columns`,
      EXIT.invalid,
    );
  }
  const repeated = [...new Set(members.filter((name, i) => members.indexOf(name) !== i))];
  if (repeated.length) throw new CliError(`CSV: the header names ${repeated.join(', ')} more than once`, EXIT.invalid);
  if (REQUIRED_LEAD_FIELDS.some((name) => !members.includes(name))) {
    throw new CliError(`CSV: the header must include ${REQUIRED_LEAD_FIELDS.join(' and ')}`, EXIT.invalid);
  }
  return members.map((member, i) => {
    if (CSV_COLUMNS.includes(member!)) return member;
    ignored.add(names[i]);
    return undefined;
  });
}

/**
 * A JSON Lines object as the lead it sends. A line of an export (a LeadView: it has `received_at`) gives its lead fields
 * and context, without the members that are null or empty; its other members go into `ignored`. Any other object is sent
 * as it is, for the service to validate.
 */
export function leadOfLine(value: Record<string, unknown>, ignored: Set<string>): Record<string, unknown> {
  if (!Object.hasOwn(value, 'received_at')) return value;
  const fields: Record<string, unknown> = {};
  for (const [member, inner] of Object.entries(value)) {
    const empty = inner === null || (Array.isArray(inner) && inner.length === 0) || (member === 'context' && isEmptyObject(inner));
    if (empty) continue;
    if (VIEW_ONLY_MEMBERS.has(member)) ignored.add(member);
    else fields[member] = inner;
  }
  return fields;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

async function* jsonlRows(stream: ReadStream, ignored: Set<string>): AsyncGenerator<ImportRow> {
  stream.setEncoding('utf8'); // a character split across two chunks is decoded whole
  let line = 0;
  let row = 0;
  const toRow = (text: string): ImportRow | undefined => {
    line++;
    if (line === 1) text = text.replace(/^\uFEFF/, '');
    if (text.trim() === '') return undefined;
    row++;
    if (text.includes('\uFFFD')) return { row, line, error: NOT_UTF8 };
    try {
      const value = JSON.parse(text) as unknown;
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { row, line, error: 'not a JSON object' };
      return { row, line, fields: leadOfLine(value as Record<string, unknown>, ignored) };
    } catch (error) {
      return { row, line, error: `invalid JSON (${(error as Error).message})` };
    }
  };
  let buffered = '';
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      buffered += chunk;
      let start = 0;
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n', start)) {
        const parsed = toRow(buffered.slice(start, buffered[end - 1] === '\r' ? end - 1 : end));
        start = end + 1;
        if (parsed) yield parsed;
      }
      buffered = buffered.slice(start);
      if (buffered.length > MAX_RECORD_BYTES) {
        throw new CliError(`JSONL: line ${line + 1} is longer than ${MAX_RECORD_BYTES} characters; stopped there`, EXIT.invalid);
      }
    }
    const last = buffered === '' ? undefined : toRow(buffered);
    if (last) yield last;
  } finally {
    stream.destroy();
  }
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

/** The six fields as the service stores them, absent ones as null, in one string: what `--dedupe email` compares. */
export function storedForm(lead: Record<string, unknown>): string {
  return JSON.stringify(LEAD_FIELD_NAMES.map((name) => (typeof lead[name] === 'string' ? normaliseField(name, lead[name]) : null)));
}

/**
 * `--dedupe email`: the id of a stored lead with the row's address (any letter case, GET /api/v1/leads?email=, page by
 * page) and the same six fields, or undefined. A row whose address the service would refuse is not looked up: it is
 * sent, and refused with the service's reasons.
 */
export async function findStoredLead(fields: Record<string, unknown>, read: (path: string) => Promise<HttpResponse>): Promise<string | undefined> {
  if (fieldFailure('email', fields.email) !== undefined) return undefined;
  const wanted = storedForm(fields);
  const query = new URLSearchParams({ email: normaliseField('email', fields.email as string), limit: '200' });
  for (;;) {
    const response = await read(`/api/v1/leads?${query}`);
    if (response.status !== 200)
      throw new CliError(`--dedupe: looking up stored leads failed: ${failureReason(response)}`, exitCodeFor(response.status), response);
    const page = response.body as { data: ({ id: string } & Record<string, unknown>)[]; next_cursor: string | null };
    const same = page.data.find((lead) => storedForm(lead) === wanted);
    if (same) return same.id;
    if (!page.next_cursor) return undefined;
    query.set('cursor', page.next_cursor);
  }
}

export type RowOutcome =
  | { row: number; line: number; status: 'stored' | 'replayed'; id: string }
  /** --dedupe: a stored lead has the row's address and fields; the row was not sent. */
  | { row: number; line: number; status: 'skipped'; id: string }
  /** --dry-run: the row was read and would be sent. */
  | { row: number; line: number; status: 'read' }
  | { row: number; line: number; status: 'failed'; reason: string; exitCode: number; problem?: unknown; unreachable?: boolean };

/** Failed-row reason: the problem's code and detail, and its field errors. */
export function failureReason(response: HttpResponse): string {
  const problem = asProblem(response);
  if (!problem?.code) return `HTTP ${response.status}`;
  const fields = (problem.errors ?? []).map((e) => `${e.pointer || '(body)'}: ${e.detail ?? e.code}`);
  return `${problem.code}${fields.length ? ` (${fields.join('; ')})` : problem.detail ? `: ${problem.detail}` : ''}`;
}

export function outcomeOf(row: ImportRow, response: HttpResponse, sentAt: number): RowOutcome {
  const { row: number, line } = row;
  if (response.status === 201 || response.status === 200) {
    const receipt = response.body as { id: string; received_at: string };
    // The service answers a replay with the first receipt: a lead received before this request was sent is a replay.
    const flagged = response.headers.get('idempotent-replayed') ?? response.headers.get('idempotency-replayed');
    const replayed = flagged !== null ? flagged === 'true' || flagged === '?1' : Date.parse(receipt.received_at) < sentAt - 50;
    return { row: number, line, status: replayed ? 'replayed' : 'stored', id: receipt.id };
  }
  return { row: number, line, status: 'failed', reason: failureReason(response), exitCode: exitCodeFor(response.status), problem: response.body };
}

/**
 * Sends the rows with at most `concurrency` requests in flight, reading the next row only when a slot is free and
 * fewer than 4 × `concurrency` outcomes wait for an earlier row's (so the file is never read far ahead of the sends),
 * and reports each outcome in row order. Two equal rows (one Idempotency-Key) are never in flight together: the second
 * waits for the first and is its replay. After a failure to reach the service no further row is read; `stopped` says
 * whether rows were left unsent.
 */
export async function sendRows(
  rows: AsyncIterable<ImportRow>,
  send: (fields: Record<string, unknown>, key: string) => Promise<HttpResponse>,
  concurrency: number,
  report: (outcome: RowOutcome) => void | Promise<void>,
  /** `--dedupe`: the id of a stored lead that makes the row a duplicate, which is then not sent. */
  existing?: (fields: Record<string, unknown>) => Promise<string | undefined>,
): Promise<{ stopped: boolean }> {
  const keysInFlight = new Map<string, Promise<unknown>>();
  const attempt = async (row: ImportRow): Promise<RowOutcome> => {
    if (row.error !== undefined) return { row: row.row, line: row.line, status: 'failed', reason: row.error, exitCode: EXIT.invalid };
    const key = idempotencyKey(row.fields!);
    while (keysInFlight.has(key)) await keysInFlight.get(key);
    const sending = (async (): Promise<RowOutcome> => {
      try {
        const stored = await existing?.(row.fields!);
        if (stored !== undefined) return { row: row.row, line: row.line, status: 'skipped', id: stored };
        const sentAt = Date.now();
        return outcomeOf(row, await send(row.fields!, key), sentAt);
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        const unreachable = error.exitCode === EXIT.server && !error.response;
        return { row: row.row, line: row.line, status: 'failed', reason: error.message.replace(/\n/g, ' '), exitCode: error.exitCode, unreachable };
      }
    })();
    keysInFlight.set(key, sending);
    try {
      return await sending;
    } finally {
      keysInFlight.delete(key);
    }
  };

  const finished = new Map<number, RowOutcome>(); // by sequence number, until every earlier row is reported
  let started = 0;
  let reported = 0;
  let running = 0;
  let unexpected: { error: unknown } | undefined;
  let unreachable = false;
  let wake: (() => void) | undefined;
  const changed = () => new Promise<void>((resolve) => (wake = resolve));
  const flush = async () => {
    for (let outcome = finished.get(reported); outcome; outcome = finished.get(reported)) {
      finished.delete(reported++);
      if (outcome.status === 'failed' && outcome.unreachable) unreachable = true;
      await report(outcome);
    }
  };
  const iterator = rows[Symbol.asyncIterator]();
  try {
    for (;;) {
      await flush();
      if (unexpected) throw unexpected.error;
      // Without a service every other row would fail the same way: no more rows are read.
      if (unreachable) return { stopped: !(await iterator.next()).done };
      if (finished.has(reported)) continue; // it finished while the report was written
      // Waits only while a request runs: the check and the wait happen in one turn, so no completion is missed.
      if (running >= concurrency || started - reported >= 4 * concurrency) {
        await changed();
        continue;
      }
      const next = await iterator.next();
      if (next.done) return { stopped: false };
      const sequence = started++;
      running++;
      attempt(next.value)
        .then(
          (outcome) => void finished.set(sequence, outcome),
          (error: unknown) => void (unexpected ??= { error }),
        )
        .finally(() => {
          running--;
          wake?.();
        });
    }
  } finally {
    while (running > 0) await changed();
    await flush();
    await iterator.return?.();
  }
}

/** The one note on an export's columns an import reads and does not send. */
export const IGNORED_NOTE = 'the service sets these, or they are legal bases, whose evidence an import cannot restate (leads import --help)';

/** Failed rows listed in the summary (all of them are reported as they happen, except on a terminal). */
const MAX_LISTED = 1000;

async function write(text: string): Promise<void> {
  // Waits for a slow reader of standard output instead of buffering a million rows of report.
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/**
 * The import's output: `json` streams one JSON document (rows, then the counts), `tty` a progress bar, `lines` a line
 * per row (failures only for a dry run); each ends with a summary. Memory stays bounded whatever the file's size.
 */
export class ImportReport {
  private readonly counts = { stored: 0, replayed: 0, skipped: 0, read: 0, failed: 0 };
  private readonly failures: { row: number; line: number; reason: string }[] = [];
  private readonly codes = new Set<number>();
  private total = 0;
  private drawn = 0;

  constructor(
    private readonly mode: 'json' | 'tty' | 'lines',
    private readonly source: RowSource,
    /** Who sends: `operator <client_id>`, `agent <registration_id>`, `anonymous`, or undefined for a dry run. */
    private readonly sentAs: string | undefined,
    /** `--dedupe email`: skipped rows are counted. */
    private readonly dedupe = false,
  ) {}

  async add(outcome: RowOutcome): Promise<void> {
    this.total++;
    this.counts[outcome.status]++;
    if (outcome.status === 'failed') {
      this.codes.add(outcome.exitCode);
      if (this.failures.length < MAX_LISTED) this.failures.push({ row: outcome.row, line: outcome.line, reason: outcome.reason });
    }
    if (this.mode === 'json') {
      const { exitCode: _code, unreachable: _unreachable, ...shown } = outcome as RowOutcome & { exitCode?: number; unreachable?: boolean };
      await write(`${this.total === 1 ? '{\n  "rows": [\n' : ',\n'}    ${JSON.stringify(shown)}`);
    } else if (this.mode === 'tty') {
      if (Date.now() - this.drawn >= 100) this.draw();
    } else if (outcome.status === 'failed') {
      await write(`row ${outcome.row} (line ${outcome.line}): failed: ${outcome.reason}\n`);
    } else if (outcome.status === 'skipped') {
      if (this.sentAs) await write(`row ${outcome.row}: skipped (lead ${outcome.id} has the same fields)\n`);
    } else if (outcome.status !== 'read') {
      await write(`row ${outcome.row}: ok${outcome.status === 'replayed' ? ' (already stored)' : ''}\n`);
    }
  }

  private draw(): void {
    this.drawn = Date.now();
    process.stdout.write(
      `\r${progressBar(this.source.progress(), this.total, this.counts.stored + this.counts.replayed + this.counts.skipped + this.counts.read, this.counts.failed)}`,
    );
  }

  /** Prints the summary and answers the exit code; `fatal` is an error that ended the import early (printed by the caller). */
  async finish(stopped: boolean, fatal?: CliError): Promise<number> {
    const { stored, replayed, skipped, read, failed } = this.counts;
    const how = this.source.format === 'csv' ? `CSV, delimiter '${this.source.delimiter}'` : 'JSONL';
    const ignored = [...this.source.ignored];
    if (this.mode === 'json') {
      const summary = {
        stored,
        replayed,
        ...(this.dedupe ? { skipped } : {}),
        failed,
        total: this.total,
        format: this.source.format,
        ...(this.source.delimiter ? { delimiter: this.source.delimiter } : {}),
        ...(this.sentAs ? { sent_as: this.sentAs } : { dry_run: true, read }),
        ...(ignored.length ? { ignored } : {}),
        ...(stopped ? { stopped: 'the service cannot be reached; later rows were not sent' } : {}),
        ...(fatal ? { error: fatal.message } : {}),
      };
      const counts = JSON.stringify(summary, null, 2).slice(1);
      await write(this.total === 0 ? `{\n  "rows": [],${counts}\n` : `\n  ],${counts}\n`);
    } else {
      if (this.mode === 'tty') {
        this.draw();
        process.stdout.write('\n');
      }
      const skips = this.dedupe ? `${skipped} skipped (a stored lead has the same address and fields), ` : '';
      const lines = [
        this.sentAs
          ? `${stored} stored, ${replayed} already stored (replayed), ${skips}${failed} failed (${how}; sent as ${this.sentAs})`
          : `dry run (${how}): ${read} rows read, ${skips}${failed} cannot be read; nothing was sent`,
      ];
      if (ignored.length) lines.push(`ignored, not sent: ${ignored.join(', ')} (${IGNORED_NOTE})`);
      if (failed) {
        const more = failed > this.failures.length ? ` and ${failed - this.failures.length} more` : '';
        lines.push(`failed rows: ${this.failures.map((f) => f.row).join(', ')}${more}`);
        for (const f of this.failures) lines.push(`  row ${f.row} (line ${f.line}): ${f.reason}`);
      }
      if (stopped) lines.push(`stopped after row ${this.total}: the service cannot be reached; later rows were not sent`);
      await write(`${lines.join('\n')}\n`);
    }
    if (fatal) return fatal.exitCode;
    for (const code of [EXIT.server, EXIT.rateLimited, EXIT.auth, EXIT.invalid]) if (this.codes.has(code)) return code;
    return EXIT.ok;
  }
}

/** A progress bar on a terminal: `[#####-----]  42%  1200 rows  1180 ok  20 failed`. */
export function progressBar(fraction: number, rows: number, ok: number, failed: number, width = 30): string {
  const filled = Math.round(Math.min(1, fraction) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${rows} rows  ${ok} ok  ${failed} failed`;
}
