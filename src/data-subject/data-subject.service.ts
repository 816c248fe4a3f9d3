import { createHmac, randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.decorator.js';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';
import { isCanonicalUuid, uuidv7 } from '../database/uuid-v7.js';
import { InvalidCursor, LeadReader, LeadRows, LeadView } from '../leads/lead-reader.service.js';
import { AppError, invalidQuery } from '../problem/app-error.js';
import { DEFAULT_PAGE_SIZE } from '../leads/leads-read.service.js';
import type { LegalBasisView } from '../leads/legal-bases.js';
import { Outbox } from '../outbox/outbox.service.js';
import { maskAddress, parseAccess, parseErasure, parseSubject, PrivacyRequestType } from './data-subject-request.js';
import { DataSubjectQueueQuery } from './data-subject-queue.query.js';
import { DataSubjectRequestsStore, DEFAULT_QUEUE, QueueEntry, QueueStatus } from './data-subject-requests.store.js';
import { addCounts, ERASURE_BATCH, ErasedBatch, ErasureCounts, LeadEraser, NIL_UUID, NO_ERASURE } from './lead-eraser.service.js';

export type DataSubjectRequestType = PrivacyRequestType;

interface Receipt<Counts> {
  request_id: string;
  type: DataSubjectRequestType;
  requested_at: string;
  completed_at: string;
  lead_ids: string[];
  counts: Counts;
}

/** The most leads one page of an access request holds (docs/decisions/0029-data-subject-requests.md). */
export const ACCESS_PAGE_SIZE = 500;

export interface AccessPage extends Receipt<{ leads: number; consent_texts: number }> {
  data: LeadView[];
  consent_texts: { sha256: string; text: string }[];
  next_cursor: string | null;
}

/**
 * `dry_run: true`: the counts are what an erasure would remove now; nothing was erased. `lead_ids`: the first
 * MAX_RECEIPT_IDS (the audit keeps them all), `ids_truncated` when there were more.
 */
export interface ErasureReceipt extends Receipt<ErasureCounts> {
  dry_run: boolean;
  ids_truncated: boolean;
  /** An erasure (not a dry run): true when its bytes were overwritten in the database's files before the answer. */
  scrubbed?: boolean;
  /** The subscribers (webhook endpoints) `lead.erased` goes to; a dry run: would go to. None when no lead is erased. */
  endpoints_notified: number;
}

/** Lead ids an erasure receipt lists at most: the answer stays small however many leads the person had. */
export const MAX_RECEIPT_IDS = 1000;

function boundedIds(receipt: Receipt<ErasureCounts>, dryRun: boolean, endpointsNotified: number): ErasureReceipt {
  const truncated = receipt.lead_ids.length > MAX_RECEIPT_IDS;
  return {
    ...receipt,
    lead_ids: truncated ? receipt.lead_ids.slice(0, MAX_RECEIPT_IDS) : receipt.lead_ids,
    dry_run: dryRun,
    ids_truncated: truncated,
    endpoints_notified: endpointsNotified,
  };
}

export interface RevocationReceipt extends Receipt<{ leads: number; revoked: number }> {
  category: 'communications';
  revoked_at: string;
}

/** The channel recorded on a `communications` entry that a revocation adds to a lead that had none. */
const REVOCATION_CHANNEL = 'data_subject_request';
const HMAC_KEY_PURPOSE = 'data_subject_hmac';

/**
 * Whom a request is recorded for: an operator's client (each request a new audit row), or a person's own request
 * (`requestId`: its row, made when the person asked, completed with the result).
 */
export interface Requester {
  clientId: string | null;
  requestId?: string;
}

const operator = (caller: Caller): Requester => ({ clientId: caller.clientId });

/**
 * Data-subject requests (LGPD Art. 18; docs/decisions/0029-data-subject-requests.md): access (a copy of every lead of
 * the person, as the read API shows it, and the consent wordings they name), erasure (LeadEraser) and revocation of
 * consent to communications. Each request leaves an audit row without personal data: an HMAC of the case-folded
 * address with a key every instance shares, the operator client, the time, counts and lead ids.
 */
@Injectable()
export class DataSubjectService {
  private key?: Promise<Buffer>;
  private readonly sql: StepTransactions;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reader: LeadReader,
    private readonly eraser: LeadEraser,
    private readonly outbox: Outbox,
    private readonly requests: DataSubjectRequestsStore,
  ) {
    this.sql = new StepTransactions(dataSource);
  }

  /**
   * One page of the person's leads, newest first: at most ACCESS_PAGE_SIZE, read by one keyset query, with the consent
   * wordings those leads name and the sealed cursor of the next page (bound to the address and to this request type),
   * or null on the last. Each page is its own audited request, with the ids it handed over.
   */
  access(body: Record<string, unknown>, caller: Caller): Promise<AccessPage> {
    const { email, cursor } = parseAccess(body);
    return this.accessPage(email, cursor, operator(caller));
  }

  /**
   * One page of the person's leads (ACCESS_PAGE_SIZE, newest first) and the sealed cursor of the next, without the
   * consent wordings or a record: what an access page is read from, and what a summary tallies.
   */
  async leadsOf(email: string, cursor: string | undefined): Promise<LeadRows> {
    try {
      return await this.reader.page({ email }, ACCESS_PAGE_SIZE, cursor, { maxLimit: ACCESS_PAGE_SIZE, purpose: 'data_subject_access', readPart: READ_PART });
    } catch (error) {
      if (!(error instanceof InvalidCursor)) throw error;
      throw new AppError('invalid_cursor', 'The cursor was altered, or was given for another e-mail address; nothing was read.');
    }
  }

  /**
   * One page of an access request, recorded unless `record` is false: a person's own request is completed by its first
   * page (the address kept for the download's hour); the pages read with the download token leave its row as it is.
   */
  async accessPage(email: string, cursor: string | undefined, requester: Requester, record = true): Promise<AccessPage> {
    const requestedAt = Date.now();
    const page = await this.leadsOf(email, cursor);
    const leads = page.data;
    const named = [...new Set(leads.flatMap((lead) => lead.legal_bases.map((basis) => basis.consent_text_sha256)).filter((sha) => sha !== null))].sort();
    const consentTexts: { sha256: string; text: string }[] = [];
    for (let start = 0; start < named.length; start += ERASURE_BATCH) {
      const chunk = named.slice(start, start + ERASURE_BATCH);
      consentTexts.push(
        ...(await this.sql.query<{ sha256: string; text: string }>(
          `SELECT sha256, text FROM consent_texts WHERE sha256 IN (${this.sql.list(1, chunk.length)}) ORDER BY sha256`,
          chunk,
        )),
      );
    }
    const leadIds = leads.map((lead) => lead.id);
    const counts = { leads: leads.length, consent_texts: consentTexts.length };
    const receipt = record
      ? await this.audit('access', email, requester, requestedAt, leadIds, counts)
      : this.receipt(requester.requestId ?? uuidv7(requestedAt), 'access', requestedAt, Date.now(), leadIds, counts);
    return { ...receipt, data: leads, consent_texts: consentTexts.map(({ sha256, text }) => ({ sha256, text })), next_cursor: page.nextCursor };
  }

  /**
   * The queue of requests, operators' and people's own, newest first: verified (and completed) ones unless `status`
   * names others, so that unverified requests, which anyone can make, never crowd it. A keyset page; the cursor is the
   * last id, encoded.
   */
  async queue(query: DataSubjectQueueQuery): Promise<{ data: QueueEntry[]; next_cursor: string | null }> {
    const statuses = query.status ? ([...new Set(query.status.split(','))] as QueueStatus[]) : DEFAULT_QUEUE;
    let before: string | null = null;
    if (query.cursor !== undefined) {
      before = Buffer.from(query.cursor, 'base64url').toString('utf8');
      if (!isCanonicalUuid(before)) {
        throw invalidQuery([{ parameter: 'cursor', code: 'invalid_cursor', detail: 'cursor must be the next_cursor of the page before.' }]);
      }
    }
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.requests.queue(statuses, limit + 1, before, Date.now());
    const data = rows.slice(0, limit);
    return { data, next_cursor: rows.length > limit ? Buffer.from(data[data.length - 1].id).toString('base64url') : null };
  }

  async erase(body: Record<string, unknown>, caller: Caller): Promise<ErasureReceipt> {
    const { email, dryRun } = parseErasure(body);
    if (dryRun) {
      const requestedAt = Date.now();
      const { leadIds, counts } = await this.eraser.dryRun(email);
      const told = await this.endpointsNotified(leadIds);
      return boundedIds(await this.audit('erasure', email, operator(caller), requestedAt, leadIds, counts, true), true, told);
    }
    return this.eraseAll(email, operator(caller));
  }

  /** Erases every lead of the address, in batches (LeadEraser), and records the request once they are all gone. */
  async eraseAll(email: string, requester: Requester): Promise<ErasureReceipt> {
    const requestedAt = Date.now();
    const subject = await this.subjectHmac(email);
    const leadIds: string[] = [];
    const batchRows: string[] = [];
    let counts = NO_ERASURE;
    // Each batch's audit row is written in the batch's transaction: a process killed between batches leaves every
    // erased lead recorded. At the end one row for the request takes their place, in one transaction.
    const record = function* (this: DataSubjectService, batch: ErasedBatch): Steps<void> {
      const id = uuidv7();
      batchRows.push(id);
      yield this.requests.insertDone(
        { id, type: 'erasure_batch', subjectHmac: subject, clientId: requester.clientId, requestedAt, completedAt: Date.now(), addressMasked: null },
        batch.leadIds,
        batch.counts,
      );
    }.bind(this);
    // One transaction per batch; the first also clears the address from agent registrations. Until a batch finds none.
    for (let first = true; ; first = false) {
      const batch = await this.eraser.eraseBatch({ emailFolded: email }, 'data_subject_request', first ? email : undefined, record);
      leadIds.push(...batch.leadIds);
      counts = addCounts(counts, batch.counts);
      if (batch.leadIds.length === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const id = requester.requestId ?? uuidv7(requestedAt);
    const completedAt = Date.now();
    await this.sql.run(
      function* (this: DataSubjectService): Steps<void> {
        for (let start = 0; start < batchRows.length; start += ERASURE_BATCH)
          yield this.requests.deleteBatchRows(batchRows.slice(start, start + ERASURE_BATCH));
        yield this.recordStep(id, 'erasure', subject, email, requester, requestedAt, completedAt, leadIds, counts);
      }.bind(this),
    );
    // The answer waits for the scrub: `scrubbed` says whether the erased bytes are gone from the files.
    const scrubbed = await this.eraser.scrub();
    const told = await this.endpointsNotified(leadIds);
    return { ...boundedIds(this.receipt(id, 'erasure', requestedAt, completedAt, leadIds, counts), false, told), scrubbed };
  }

  /**
   * The subscribers `lead.erased` is (or would be) delivered to, as the fan-out chooses them: none without an erased
   * lead, since no event is written then. A webhook endpoint that gets leads' data gets it too (webhooks/).
   */
  private endpointsNotified(leadIds: readonly string[]): Promise<number> {
    return leadIds.length ? this.outbox.subscribersOf('lead.erased', Date.now()) : Promise.resolve(0);
  }

  revoke(body: Record<string, unknown>, caller: Caller): Promise<RevocationReceipt> {
    return this.revokeAll(parseSubject(body), operator(caller));
  }

  /** Revokes consent to communications on every lead of the address, in batches, and records the request. */
  async revokeAll(email: string, requester: Requester): Promise<RevocationReceipt> {
    const requestedAt = Date.now();
    const revokedAt = new Date(requestedAt).toISOString();
    const leadIds: string[] = [];
    let revoked = 0;
    for (let after = NIL_UUID; ;) {
      const batch = await this.sql.run(() => this.revokeSteps(email, after, revokedAt, requestedAt));
      leadIds.push(...batch.seen);
      revoked += batch.changed;
      if (batch.changed) this.outbox.wake();
      if (batch.seen.length < ERASURE_BATCH) break;
      after = batch.seen[batch.seen.length - 1];
      await new Promise((resolve) => setImmediate(resolve));
    }
    const receipt = await this.audit('consent_revocation', email, requester, requestedAt, leadIds, { leads: leadIds.length, revoked });
    return { ...receipt, category: 'communications', revoked_at: revokedAt };
  }

  /**
   * One batch of the person's leads (by id, after `after`): every granted `communications` entry declined from now on,
   * or a declined one added where there was none; `consent.revoked` with the ids of the leads that changed.
   */
  private *revokeSteps(email: string, after: string, revokedAt: string, now: number): Steps<{ seen: string[]; changed: number }> {
    const p = this.sql.p.bind(this.sql);
    const rows = yield [
      `SELECT id, legal_bases FROM leads WHERE email_folded = ${p(1)} AND id > ${p(2)} ORDER BY id LIMIT ${ERASURE_BATCH}${this.sql.postgres ? ' FOR UPDATE' : ''}`,
      [email, after],
    ];
    const changed: string[] = [];
    for (const row of rows) {
      const bases = row.legal_bases === null ? [] : (JSON.parse(row.legal_bases as string) as LegalBasisView[]);
      const next = revokeCommunications(bases, revokedAt);
      if (next === bases) continue;
      yield [`UPDATE leads SET legal_bases = ${p(1)} WHERE id = ${p(2)}`, [JSON.stringify(next), row.id]];
      changed.push(row.id as string);
    }
    if (changed.length) yield* this.outbox.publish('consent.revoked', { lead_ids: changed, category: 'communications', revoked_at: revokedAt }, now);
    return { seen: rows.map((row) => row.id as string), changed: changed.length };
  }

  /**
   * Records the request: an operator's as a new audit row (a dry run as `erasure_dry_run`, apart from the erasures that
   * happened), a person's own by completing its row.
   */
  private async audit<Counts>(
    type: DataSubjectRequestType,
    email: string,
    requester: Requester,
    requestedAt: number,
    leadIds: string[],
    counts: Counts,
    dryRun = false,
  ): Promise<Receipt<Counts>> {
    const id = requester.requestId ?? uuidv7(requestedAt);
    const subject = await this.subjectHmac(email);
    const completedAt = Date.now();
    const [sql, params] = this.recordStep(id, dryRun ? 'erasure_dry_run' : type, subject, email, requester, requestedAt, completedAt, leadIds, counts);
    await this.sql.query(sql, params);
    return this.receipt(id, type, requestedAt, completedAt, leadIds, counts);
  }

  /** The write that records a request: no personal data but the address's HMAC and its masked form (for the queue). */
  private recordStep(
    id: string,
    type: string,
    subject: string,
    email: string,
    requester: Requester,
    requestedAt: number,
    completedAt: number,
    leadIds: string[],
    counts: unknown,
  ): Step {
    if (requester.requestId) return this.requests.complete(requester.requestId, completedAt, leadIds, counts, type === 'access');
    return this.requests.insertDone(
      { id, type, subjectHmac: subject, clientId: requester.clientId, requestedAt, completedAt, addressMasked: maskAddress(email) },
      leadIds,
      counts,
    );
  }

  private receipt<Counts>(
    id: string,
    type: DataSubjectRequestType,
    requestedAt: number,
    completedAt: number,
    leadIds: string[],
    counts: Counts,
  ): Receipt<Counts> {
    return {
      request_id: id,
      type,
      requested_at: new Date(requestedAt).toISOString(),
      completed_at: new Date(completedAt).toISOString(),
      lead_ids: leadIds,
      counts,
    };
  }

  async subjectHmac(email: string): Promise<string> {
    return createHmac('sha256', await this.hmacKey())
      .update(email)
      .digest('hex');
  }

  /** The audit's HMAC key, shared by every instance through service_keys: made by the first that needs it. */
  private hmacKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private async loadKey(): Promise<Buffer> {
    const p = this.sql.p.bind(this.sql);
    await this.sql.query(`INSERT INTO service_keys (purpose, secret) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (purpose) DO NOTHING`, [
      HMAC_KEY_PURPOSE,
      randomBytes(32).toString('base64url'),
    ]);
    const [row] = await this.sql.query<{ secret: string }>(`SELECT secret FROM service_keys WHERE purpose = ${p(1)}`, [HMAC_KEY_PURPOSE]);
    return Buffer.from(row.secret, 'base64url');
  }
}

/** Leads per keyset query of an access page (the page is read in 5 of them, a turn between). */
const READ_PART = 100;

/** Leads per part of an access page as it is written: 500 leads of the longest messages are 2.6 MB of JSON. */
const WRITE_PART = 50;

/**
 * Writes an access page as its JSON, in parts of WRITE_PART leads with a turn of the event loop (and the socket's
 * drain) between them, so that serialising a page never holds the loop for the whole page.
 */
export async function writeAccessPage(res: Response, page: { data: LeadView[] }): Promise<void> {
  const { data, ...rest } = page;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const head = JSON.stringify(rest);
  const write = async (text: string) => {
    if (!res.write(text)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
    await nextTurn();
  };
  await write(`${head.slice(0, -1)},"data":[`);
  for (let start = 0; start < data.length && !res.destroyed; start += WRITE_PART) {
    await write(`${start ? ',' : ''}${JSON.stringify(data.slice(start, start + WRITE_PART)).slice(1, -1)}`);
  }
  res.end(']}');
}

/** The legal bases after a revocation of consent to communications; the same array when nothing changes. */
export function revokeCommunications(bases: LegalBasisView[], revokedAt: string): LegalBasisView[] {
  const communications = bases.filter((basis) => basis.category === 'communications');
  if (communications.length === 0) {
    return [
      ...bases,
      {
        category: 'communications',
        type: 'consent',
        status: 'declined',
        recorded_at: revokedAt,
        channel: REVOCATION_CHANNEL,
        consent_text_sha256: null,
        revoked_at: revokedAt,
      },
    ];
  }
  if (!communications.some((basis) => basis.status === 'granted')) return bases;
  return bases.map((basis) =>
    basis.category === 'communications' && basis.status === 'granted' ? { ...basis, status: 'declined', revoked_at: revokedAt } : basis,
  );
}
