import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isCanonicalUuid } from '../database/uuid-v7.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import type { LeadChannel } from './lead-channel.js';
import { Lead } from './lead.entity.js';
import { foldEmail } from './lead-rules.js';
import { ftsQuery, likePattern, searchPhrases, tsQuery } from './lead-search.js';
import type { LeadContext } from './lead-context.js';
import type { LegalBasisView } from './legal-bases.js';
import { AUTOMATIC_DECISION, SCREENING_VERDICTS, ScreeningReason, ScreeningVerdict, ScreeningView } from '../screening/screening.js';

export type { LeadChannel } from './lead-channel.js';

/** A stored lead as every read surface shows it (REST, GraphQL, MCP, export, CLI). */
export interface LeadView {
  id: string;
  /** ISO 8601 in UTC with milliseconds, as the receipt of POST /api/v1/lead gave it. */
  received_at: string;
  nome: string;
  email: string;
  telefone: string | null;
  telefone_e164: string | null;
  empresa: string | null;
  mensagem: string | null;
  origem: string | null;
  channel: LeadChannel;
  registration_id: string | null;
  client_id: string | null;
  /** With their evidence; empty when none were sent. */
  legal_bases: LegalBasisView[];
  /** Attribution; empty when none was sent. */
  context: LeadContext;
  /** The screening verdict: who decided it, when and why. */
  screening: ScreeningView;
}

/** A lead just stored, as the read API will show it (the webhook payload is built from it in the same transaction). */
export function leadViewOf(lead: Lead): LeadView {
  return {
    id: lead.id,
    received_at: lead.receivedAt.toISOString(),
    nome: lead.nome,
    email: lead.email,
    telefone: lead.telefone,
    telefone_e164: lead.telefoneE164,
    empresa: lead.empresa,
    mensagem: lead.mensagem,
    origem: lead.origem,
    channel: lead.channel,
    registration_id: lead.registrationId,
    client_id: lead.clientId,
    legal_bases: lead.legalBases ?? [],
    context: lead.context ?? {},
    screening: {
      verdict: lead.screeningVerdict,
      reasons: lead.screeningReasons,
      decided_by: lead.screeningDecidedBy,
      decided_at: (lead.screeningDecidedAt ?? lead.receivedAt).toISOString(),
    },
  };
}

/** Which leads: `since` inclusive, `until` exclusive (half-open, so consecutive windows neither overlap nor leave gaps). */
export interface LeadFilter {
  since?: Date;
  until?: Date;
  /** Exact. */
  origem?: string;
  /** Exact but case-insensitive (foldEmail on both sides). */
  email?: string;
  /** Only leads of this verdict; every verdict when absent (the read surfaces default to `accepted`: leadFilterOf). */
  screening?: ScreeningVerdict;
  /** Exact. */
  channel?: LeadChannel;
  /**
   * The search `q` (lead-search.ts): every whitespace-separated term starts a word of the lead's nome, e-mail or
   * empresa, accents and letter case aside. A `q` without a letter or digit matches nothing.
   */
  q?: string;
}

/** Where a lead stands in list order: its received_at (ms) and id. */
export interface LeadPosition {
  receivedAt: number;
  id: string;
}

/** A page of leads without the held count (LeadReader.page): what a surface that shows its own counts reads. */
export interface LeadRows {
  data: LeadView[];
  /**
   * The cursor after item `index` of `data` (Relay's edges), sealed when asked for: an HMAC per lead of every page was
   * 16% of a REST page's CPU (bench/RESULTS.md), and REST needs only nextCursor.
   */
  cursorAfter(index: number): string;
  /** The cursor after the last item when more leads follow, else null. */
  nextCursor: string | null;
}

export interface LeadPage extends LeadRows {
  /** Held leads under the same filters but the verdict, at most HELD_COUNT_CAP (heldCount). */
  heldCount: number;
}

/** A cursor that is malformed, altered, or was issued for other filters (or by a database with another key). */
export class InvalidCursor extends Error {
  constructor() {
    super('The cursor is not one this service issued for these filters.');
    this.name = 'InvalidCursor';
  }
}

/** How many of the newest leads a search reads row by row before it asks the search index (keysetQueries). */
const RECENT_SCAN = 4000;
/** One lead in this many of the newest having a word makes it common (countedBy). */
const COMMON_SHARE = 20;
/**
 * At most this many held (or spam) leads, a search common among all leads is counted among them by reading them all
 * (countedBy): the FTS5 index would hand over every lead with the word, whatever its verdict (a name one lead in five
 * has: 320 ms at a million leads, against 22–34 ms for reading 10,000 held leads; bench/RESULTS.md, inbox).
 */
const REVIEW_SCAN_MAX = 20_000;

/** The largest page any surface may ask for. */
export const MAX_PAGE_SIZE = 200;

/**
 * The most held leads a page counts: the count walks the screening index, so it stays one short query however many
 * leads wait; more than this shows as this many ("1000 or more"), which is already a queue no one reviews by paging.
 */
export const HELD_COUNT_CAP = 1000;

/**
 * `screening_verdict = '<verdict>'`, the verdict written as a literal (one of three known words, checked here): held and
 * spam leads are found through partial indexes (`leads_held_idx`, `leads_spam_idx`), which a planner matches only
 * against a literal, not a bound parameter (migrations/1766100000000-lead-review-indexes.ts).
 */
export function verdictCondition(verdict: ScreeningVerdict): string {
  if (!SCREENING_VERDICTS.includes(verdict)) throw new RangeError(`not a screening verdict: ${String(verdict)}`);
  return `screening_verdict = '${verdict}'`;
}

/** The columns of a LeadView, in its order: what every read selects; legal_bases and context hold JSON. */
export const LEAD_VIEW_COLUMNS = [
  'id',
  'received_at',
  'nome',
  'email',
  'telefone',
  'telefone_e164',
  'empresa',
  'mensagem',
  'origem',
  'channel',
  'registration_id',
  'client_id',
  'legal_bases',
  'context',
] as const satisfies readonly (keyof Omit<LeadView, 'screening'>)[];

/** The columns of a LeadView's `screening`, selected after LEAD_VIEW_COLUMNS (reasons as JSON). */
export const SCREENING_COLUMNS = ['screening_verdict', 'screening_reasons', 'screening_decided_by', 'screening_decided_at'] as const;

const COLUMNS = [...LEAD_VIEW_COLUMNS, ...SCREENING_COLUMNS].join(', ');

/** A row as the driver returns it: received_at in the driver's own form, the JSON columns as text. */
type Row = Omit<LeadView, 'received_at' | 'legal_bases' | 'context' | 'screening'> & {
  received_at: unknown;
  legal_bases: string | null;
  context: string | null;
  screening_verdict: ScreeningVerdict;
  screening_reasons: string;
  screening_decided_by: string | null;
  screening_decided_at: unknown;
};

/**
 * The one read path for stored leads: newest first, by (received_at, id) descending, in keyset pages. A page's SQL
 * seeks with the row value `(received_at, id) < (…)`, which both SQLite and PostgreSQL answer from an index in that order
 * (alone, or after email_folded or origem). Cursors are sealed with a key kept in the database, so every instance
 * reads every instance's cursors (docs/decisions/0023-lead-read-api.md).
 */
@Injectable()
export class LeadReader implements OnModuleInit {
  private readonly receivedAt: ColumnMetadata;
  private readonly sqlite: boolean;
  private key?: Promise<Buffer>;
  /**
   * PostgreSQL's search: `like` (LIKE ' word%' over pg_trgm's GIN index) or `words` (the built-in text search's prefix
   * query over its GIN index, where pg_trgm could not be created). Both give the same leads (lead-search.e2e-spec.ts).
   */
  private pgSearch: 'like' | 'words' = 'like';

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.receivedAt = dataSource.getMetadata(Lead).findColumnWithPropertyName('receivedAt')!;
    this.sqlite = dataSource.options.type === 'better-sqlite3';
  }

  /** Which index migration 1766000000000 made on PostgreSQL decides the query that uses it. */
  async onModuleInit(): Promise<void> {
    if (this.sqlite) return;
    const rows = (await this.dataSource.query(`SELECT 1 FROM pg_indexes WHERE tablename = 'leads' AND indexname = 'leads_search_words_idx'`)) as unknown[];
    this.pgSearch = rows.length ? 'words' : 'like';
  }

  /**
   * One page of the leads the filter selects, after the cursor's lead; limit 1 to `maxLimit` (MAX_PAGE_SIZE unless a
   * surface says otherwise). A `purpose` binds the cursors to that surface too, so that no other surface takes them.
   * Throws InvalidCursor.
   */
  async list(filter: LeadFilter, limit: number, cursor?: string, options: { maxLimit?: number; purpose?: string; readPart?: number } = {}): Promise<LeadPage> {
    const page = await this.page(filter, limit, cursor, options);
    return { ...page, heldCount: await this.heldCount(filter) };
  }

  /** list() without the held count, for a surface that counts for itself (the inbox) or needs none (access requests). */
  async page(filter: LeadFilter, limit: number, cursor?: string, options: { maxLimit?: number; purpose?: string; readPart?: number } = {}): Promise<LeadRows> {
    const max = options.maxLimit ?? MAX_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new RangeError(`limit must be an integer from 1 to ${max}`);
    const key = await this.cursorKey();
    const binding = options.purpose === undefined ? filterBinding(filter) : `${options.purpose}\n${filterBinding(filter)}`;
    const after = cursor === undefined ? undefined : openCursor(key, binding, cursor);
    const rows = await this.rowsInParts(filter, limit + 1, after, options.readPart ?? limit + 1);
    const data = rows.slice(0, limit);
    const cursorAfter = (index: number) => sealCursor(key, binding, Date.parse(data[index].received_at), data[index].id);
    return { data, cursorAfter, nextCursor: rows.length > limit ? cursorAfter(data.length - 1) : null };
  }

  /**
   * The held leads the filter's other conditions select, whatever its verdict, counted up to HELD_COUNT_CAP: one query
   * over leads_held_idx (or the e-mail's or origem's index) that stops at the cap; a search as countUpTo runs it.
   */
  async heldCount(filter: LeadFilter): Promise<number> {
    return this.counted({ ...filter, screening: 'held' }, HELD_COUNT_CAP);
  }

  /**
   * How many leads the filter selects, exactly up to `cap`; cap + 1 means more than `cap` (the inbox shows "10 000+").
   * One query that stops after cap + 1 rows, so it stays short at any number of leads.
   */
  async countUpTo(filter: LeadFilter, cap: number): Promise<number> {
    if (!Number.isInteger(cap) || cap < 0) throw new RangeError('cap must be a non-negative integer');
    return this.counted(filter, cap + 1);
  }

  /** The leads the filter selects, counted up to `limit`, by the plan countedBy chooses. */
  private async counted(filter: LeadFilter, limit: number): Promise<number> {
    const plan = await this.countedBy(filter);
    let query: { sql: string; params: unknown[] };
    if (plan === 'review') {
      // Every lead of the verdict (at most REVIEW_SCAN_MAX), in its partial index's order: no planner takes the search index.
      const { sql, params } = this.recentScan(filter, '1', REVIEW_SCAN_MAX + 1, undefined, 'search_folded');
      query = { sql: `SELECT COUNT(*) AS n FROM (${sql} LIMIT ${limit}) AS counted`, params };
    } else {
      const { where, params } = this.conditions(filter, undefined, 0, plan);
      query = {
        sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM leads${where.length ? ` WHERE ${where.join(' AND ')}` : ''} LIMIT ${limit}) AS counted`,
        params,
      };
    }
    const [row] = (await this.dataSource.query(query.sql, query.params)) as { n: number | string }[];
    return Number(row.n);
  }

  /**
   * How a search is counted. Few held or spam leads (REVIEW_SCAN_MAX) are read in full (`review`) when any word of the
   * search is common among all leads: a search index would hand over every lead with that word, whatever its verdict
   * (FTS5, and PostgreSQL's planner, which joined the trigram index's 200,000 Silvas to 10,000 held leads). Otherwise, on
   * SQLite, a search that one in COMMON_SHARE of the newest RECENT_SCAN leads the filter selects matches is common, and
   * counted by reading leads in list order (`scan`: the count stops early); a rarer one through the index.
   */
  private async countedBy(filter: LeadFilter): Promise<'index' | 'scan' | 'review'> {
    if (filter.q === undefined) return 'index';
    if (filter.screening === 'held' || filter.screening === 'spam') return (await this.readInFull(filter)) ? 'review' : 'index';
    if (!this.sqlite) return 'index';
    return (await this.common(filter)) ? 'scan' : 'index';
  }

  /** A search among few held or spam leads, one of its words common among all leads: read them all (countedBy). */
  private async readInFull(filter: LeadFilter): Promise<boolean> {
    if (filter.q === undefined || (filter.screening !== 'held' && filter.screening !== 'spam') || !(await this.fewLeads(filter.screening))) return false;
    const every = { ...filter, screening: undefined };
    for (const word of searchPhrases(filter.q).flat()) if (await this.common({ ...every, q: word })) return true;
    return false;
  }

  /** At most REVIEW_SCAN_MAX leads have this verdict (their partial index alone answers). */
  private async fewLeads(verdict: ScreeningVerdict): Promise<boolean> {
    const sql = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM leads WHERE ${verdictCondition(verdict)} LIMIT ${REVIEW_SCAN_MAX + 1}) AS review`;
    const [row] = (await this.dataSource.query(sql)) as { n: number | string }[];
    return Number(row.n) <= REVIEW_SCAN_MAX;
  }

  /** One in COMMON_SHARE of the newest RECENT_SCAN leads the filter's other conditions select match its search. */
  private async common(filter: LeadFilter): Promise<boolean> {
    const { sql, params } = this.recentScan(filter, 'COUNT(*) AS n', RECENT_SCAN, undefined, 'search_folded');
    const [row] = (await this.dataSource.query(sql, params)) as { n: number | string }[];
    return Number(row.n) * COMMON_SHARE >= RECENT_SCAN;
  }

  /** How many leads the filter selects: one COUNT over the day's part of the keyset index (the digest's total for a day). */
  async count(filter: LeadFilter): Promise<number> {
    const { where, params } = this.conditions(filter);
    const [row] = (await this.dataSource.query(`SELECT COUNT(*) AS n FROM leads${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params)) as {
      n: number | string;
    }[];
    return Number(row.n);
  }

  /**
   * rows() for a large page: keyset queries of at most `part` rows each, one after the other, with a turn of the event
   * loop between them (on SQLite a query holds the loop while it runs).
   */
  private async rowsInParts(filter: LeadFilter, limit: number, after: LeadPosition | undefined, part: number): Promise<LeadView[]> {
    const rows: LeadView[] = [];
    for (let position = after; rows.length < limit;) {
      const want = Math.min(part, limit - rows.length);
      const got = await this.rows(filter, want, position);
      rows.push(...got);
      if (got.length < want || rows.length === limit) break;
      position = { receivedAt: Date.parse(rows[rows.length - 1].received_at), id: rows[rows.length - 1].id };
      await nextTurn();
    }
    return rows;
  }

  /** Up to `limit` leads the filter selects, after the lead at `after`, in list order, without cursors. */
  async rows(filter: LeadFilter, limit: number, after?: LeadPosition): Promise<LeadView[]> {
    // The held queue searched for a common word: its few leads read in full, in order (the index would hand over every
    // lead with the word); one query, complete since there are at most REVIEW_SCAN_MAX.
    const queries = (await this.readInFull(filter))
      ? [this.ordered(this.recentScan(filter, COLUMNS, REVIEW_SCAN_MAX + 1, after), limit)]
      : this.keysetQueries(filter, limit, after);
    let rows: Row[] = [];
    for (const { sql, params } of queries) {
      rows = (await this.dataSource.query(sql, params)) as Row[];
      if (rows.length === limit) break;
    }
    return rows.map((row) => this.view(row));
  }

  /**
   * The keyset queries of a page: LEAD_VIEW_COLUMNS of up to `limit` leads after `after`, in list order. Run in turn
   * until one gives `limit` rows; the last one's answer is the page. One query, but for a search two: first the
   * newest RECENT_SCAN leads of the other filters, searched row by row (a common word fills the page there, where the
   * search index would hand over every lead that has it, to be read and sorted: 1.5 s on SQLite for a name one lead in
   * five has, at a million leads, and 71 ms p50 on PostgreSQL), then the search index (a rare word: few leads to read).
   * rows() runs them; the export (lead-export.reader.ts) runs them for its larger pages, as arrays.
   */
  keysetQueries(filter: LeadFilter, limit: number, after?: LeadPosition): { sql: string; params: unknown[] }[] {
    const indexed = this.keysetQuery(filter, limit, after);
    if (filter.q === undefined) return [indexed];
    return [this.ordered(this.recentScan(filter, COLUMNS, Math.max(RECENT_SCAN, limit * 20), after), limit), indexed];
  }

  /** A recentScan's leads in list order, the first `limit`. */
  private ordered({ sql, params }: { sql: string; params: unknown[] }, limit: number): { sql: string; params: unknown[] } {
    return { sql: `${sql} ORDER BY received_at DESC, id DESC LIMIT ${limit}`, params };
  }

  /** `select` over those of the newest `newest` leads of the filter's other conditions (after `after`) that its search finds; `read`: what is read of each. */
  private recentScan(
    filter: LeadFilter,
    select: string,
    newest: number,
    after?: LeadPosition,
    read = `${COLUMNS}, search_folded`,
  ): { sql: string; params: unknown[] } {
    const { where, params } = this.conditions({ ...filter, q: undefined }, after);
    const { where: search, params: searchParams } = this.conditions({ q: filter.q }, undefined, params.length);
    const recent = `SELECT ${read} FROM leads${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT ${newest}`;
    return { sql: `SELECT ${select} FROM (${recent}) AS recent WHERE ${search.join(' AND ')}`, params: [...params, ...searchParams] };
  }

  /** The keyset query of a page over the search index (FTS5 on SQLite). */
  private keysetQuery(filter: LeadFilter, limit: number, after?: LeadPosition): { sql: string; params: unknown[] } {
    const { where, params } = this.conditions(filter, after, 0, 'index');
    const sql = `SELECT ${COLUMNS} FROM leads${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT ${limit}`;
    return { sql, params };
  }

  /**
   * The WHERE conditions of a filter, and after a position. The verdict is a literal (verdictCondition): held and spam
   * pages walk their partial index in keyset order, accepted ones the keyset index, the verdict checked on each row.
   */
  private conditions(filter: LeadFilter, after?: LeadPosition, offset = 0, search: 'index' | 'scan' = 'scan'): { where: string[]; params: unknown[] } {
    const params: unknown[] = [];
    const param = (value: unknown) => this.dataSource.driver.createParameter(`p${offset + params.push(value)}`, offset + params.length - 1);
    const where: string[] = [];
    if (filter.screening !== undefined) where.push(verdictCondition(filter.screening));
    if (filter.email !== undefined) where.push(`email_folded = ${param(foldEmail(filter.email))}`);
    if (filter.origem !== undefined) where.push(`origem = ${param(filter.origem)}`);
    if (filter.channel !== undefined) where.push(`channel = ${param(filter.channel)}`);
    if (filter.q !== undefined) where.push(this.search(filter.q, param, search));
    if (filter.since !== undefined) where.push(`received_at >= ${param(this.stored(filter.since))}`);
    // After a cursor, `until` is implied (the cursor's lead met it) and left out: beside the row value, SQLite would seek
    // from `until` and walk every row down to the cursor.
    if (filter.until !== undefined && !after) where.push(`received_at < ${param(this.stored(filter.until))}`);
    if (after) where.push(`(received_at, id) < (${param(this.stored(new Date(after.receivedAt)))}, ${param(after.id)})`);
    return { where, params };
  }

  /**
   * The condition of a search: each phrase of `q` (searchPhrases) at the start of a word of search_folded. On SQLite
   * through the FTS5 index (`index`) or by reading search_folded (`scan`, SQLite's LIKE: the folded text holds no
   * letter whose case it would fold); on PostgreSQL the query its index answers.
   */
  private search(q: string, param: (value: unknown) => string, using: 'index' | 'scan'): string {
    const phrases = searchPhrases(q);
    if (phrases.length === 0) return '1 = 0';
    if (this.sqlite && using === 'index') return `rowid IN (SELECT rowid FROM leads_search WHERE leads_search MATCH ${param(ftsQuery(phrases))})`;
    if (this.pgSearch === 'words') return `to_tsvector('simple', search_folded) @@ to_tsquery('simple', ${param(tsQuery(phrases))})`;
    return phrases.map((phrase) => `search_folded LIKE ${param(likePattern(phrase))}`).join(' AND ');
  }

  /** received_at as the database gave it, as a LeadView shows it: ISO 8601 in UTC with milliseconds. */
  receivedAtOf(stored: unknown): string {
    return (this.dataSource.driver.prepareHydratedValue(stored, this.receivedAt) as Date).toISOString();
  }

  /** The lead with this id (a UUID, in any letter case), or null. */
  async get(id: string): Promise<LeadView | null> {
    const canonical = id.toLowerCase();
    // Anything else is no lead's id; PostgreSQL would refuse it as a uuid rather than find nothing.
    if (!isCanonicalUuid(canonical)) return null;
    const [row] = (await this.dataSource.query(`SELECT ${COLUMNS} FROM leads WHERE id = ${this.dataSource.driver.createParameter('id', 0)}`, [
      canonical,
    ])) as Row[];
    return row ? this.view(row) : null;
  }

  /** A date as the column stores it (SQLite: UTC text with milliseconds, compared as text), by TypeORM's own conversion. */
  private stored(date: Date): unknown {
    return this.dataSource.driver.preparePersistentValue(date, this.receivedAt);
  }

  /** A row of LEAD_VIEW_COLUMNS and SCREENING_COLUMNS, as the driver returns it, as a LeadView. */
  viewOf(row: Record<string, unknown>): LeadView {
    return this.view(row as Row);
  }

  /** A lead's screening as the columns hold it (decided_at is null only in a SQLite row no service wrote). */
  screeningOf(verdict: unknown, reasons: unknown, decidedBy: unknown, decidedAt: unknown, receivedAt: string): ScreeningView {
    return {
      verdict: verdict as ScreeningVerdict,
      reasons: typeof reasons === 'string' ? (JSON.parse(reasons) as ScreeningReason[]) : [],
      decided_by: typeof decidedBy === 'string' ? decidedBy : AUTOMATIC_DECISION,
      decided_at: decidedAt === null || decidedAt === undefined ? receivedAt : this.receivedAtOf(decidedAt),
    };
  }

  private view(row: Row): LeadView {
    const receivedAt = this.receivedAtOf(row.received_at);
    return {
      id: row.id,
      received_at: receivedAt,
      nome: row.nome,
      email: row.email,
      telefone: row.telefone,
      telefone_e164: row.telefone_e164,
      empresa: row.empresa,
      mensagem: row.mensagem,
      origem: row.origem,
      channel: row.channel,
      registration_id: row.registration_id,
      client_id: row.client_id,
      legal_bases: row.legal_bases === null ? [] : (JSON.parse(row.legal_bases) as LegalBasisView[]),
      context: row.context === null ? {} : (JSON.parse(row.context) as LeadContext),
      screening: this.screeningOf(row.screening_verdict, row.screening_reasons, row.screening_decided_by, row.screening_decided_at, receivedAt),
    };
  }

  /**
   * The cursor key, shared through the database: made by whichever instance needs it first (a conflict means another
   * made it meanwhile), then read by all. Kept for the life of the process; a failure is retried on the next call.
   */
  private cursorKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private async loadKey(): Promise<Buffer> {
    const [p1, p2] = this.sqlite ? ['?', '?'] : ['$1', '$2'];
    await this.dataSource.query(`INSERT INTO service_keys (purpose, secret) VALUES (${p1}, ${p2}) ON CONFLICT (purpose) DO NOTHING`, [
      CURSOR_KEY_PURPOSE,
      randomBytes(32).toString('base64url'),
    ]);
    const [row] = (await this.dataSource.query(`SELECT secret FROM service_keys WHERE purpose = ${p1}`, [CURSOR_KEY_PURPOSE])) as { secret: string }[];
    return Buffer.from(row.secret, 'base64url');
  }
}

const CURSOR_KEY_PURPOSE = 'lead_cursor';
const CURSOR_VERSION = 1;
const MAC_BYTES = 16;
/** Longer than any cursor this service writes (about 90 characters); longer input is refused before decoding. */
const MAX_CURSOR_LENGTH = 200;
const CURSOR_TEXT = /^[A-Za-z0-9_-]+$/;
const CURSOR_PAYLOAD = /^(\d{1,15})\.([0-9a-f-]{36})$/;

/** What a cursor is bound to: the filter as the query compares it (dates to the millisecond, the e-mail folded). */
export function filterBinding(filter: LeadFilter): string {
  const binding: unknown[] = [
    filter.since?.getTime() ?? null,
    filter.until?.getTime() ?? null,
    filter.origem ?? null,
    filter.email === undefined ? null : foldEmail(filter.email),
    filter.screening ?? 'all',
  ];
  // Only when given, so that the cursors issued before these filters existed stay valid. `q` as the query compares it:
  // the same phrases are the same search ("João  Silva" and "joao silva").
  if (filter.channel !== undefined || filter.q !== undefined) binding.push(filter.channel ?? null, filter.q === undefined ? null : searchPhrases(filter.q));
  return JSON.stringify(binding);
}

/**
 * A cursor: base64url of a version byte, a 128-bit HMAC-SHA256 tag over the filter binding and the payload, and the
 * payload `<received_at ms>.<id>`, the position of the lead it follows.
 */
export function sealCursor(key: Buffer, binding: string, receivedAtMs: number, id: string): string {
  const payload = Buffer.from(`${receivedAtMs}.${id}`, 'latin1');
  return Buffer.concat([Buffer.of(CURSOR_VERSION), tag(key, binding, payload), payload]).toString('base64url');
}

/** The position a cursor holds, if this key sealed it for this binding; else InvalidCursor. */
export function openCursor(key: Buffer, binding: string, cursor: string): LeadPosition {
  if (cursor.length > MAX_CURSOR_LENGTH || !CURSOR_TEXT.test(cursor)) throw new InvalidCursor();
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length <= 1 + MAC_BYTES || bytes[0] !== CURSOR_VERSION) throw new InvalidCursor();
  const payload = bytes.subarray(1 + MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(1, 1 + MAC_BYTES), tag(key, binding, payload))) throw new InvalidCursor();
  const match = CURSOR_PAYLOAD.exec(payload.toString('latin1'));
  if (!match) throw new InvalidCursor();
  return { receivedAt: Number(match[1]), id: match[2] };
}

function tag(key: Buffer, binding: string, payload: Buffer): Buffer {
  return createHmac('sha256', key).update(binding).update('\n').update(payload).digest().subarray(0, MAC_BYTES);
}
