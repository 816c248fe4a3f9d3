import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Step, StepTransactions } from '../database/step-transaction.js';
import { Metrics } from '../telemetry/metrics.js';

export type RequestStatus = 'identity_unverified' | 'verified' | 'completed' | 'locked';
/** What the queue shows: `expired` is an unverified request past its `expires_at`. */
export type QueueStatus = RequestStatus | 'expired';
/** The requests that do something to the data, carried out again when their first run did not finish. */
export type UnfinishedType = 'erasure' | 'consent_revocation';
export const QUEUE_STATUSES: readonly QueueStatus[] = ['identity_unverified', 'verified', 'completed', 'locked', 'expired'];
/** The queue by default: requests whose person is known to be who they say (an operator's, or a verified one). */
export const DEFAULT_QUEUE: readonly QueueStatus[] = ['verified', 'completed'];

/** The rows of the audit that are not requests: a dry run, and an erasure's batches before its row replaces them. */
const NOT_REQUESTS = ['erasure_dry_run', 'erasure_batch'];

export interface NewSelfServiceRequest {
  id: string;
  type: string;
  subjectHmac: string;
  requestedAt: number;
  expiresAt: number;
  addressMasked: string;
  addressSealed: string;
  verificationId: string;
}

export interface SelfServiceRequest {
  id: string;
  type: string;
  status: RequestStatus;
  requestedAt: number;
  expiresAt: number;
  verifiedAt: number | null;
  verificationId: string;
  addressSealed: string | null;
  downloadHash: string | null;
  downloadExpiresAt: number | null;
}

export interface QueueEntry {
  id: string;
  type: string;
  status: QueueStatus;
  channel: string;
  received_at: string;
  verified_at: string | null;
  due_at: string | null;
  completed_at: string | null;
  email_masked: string | null;
}

const time = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const iso = (value: unknown) => (value === null || value === undefined ? null : new Date(Number(value)).toISOString());

/**
 * The one home of data_subject_requests' SQL: the audit of operators' requests, and people's own requests from the
 * code sent to their address to the result (docs/decisions/0029 and 0040).
 */
@Injectable()
export class DataSubjectRequestsStore {
  readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource, metrics: Metrics) {
    this.sql = new StepTransactions(dataSource);
    metrics.onScrape(
      'data_subject_requests_open',
      async () => {
        const now = Date.now();
        const { open, oldestVerifiedAt, earliestDueAt } = await this.openSummary();
        metrics.dataSubjectRequestsOpen.set(open);
        metrics.dataSubjectRequestsOldestAge.set(oldestVerifiedAt === null ? 0 : Math.max(0, (now - oldestVerifiedAt) / 1000));
        metrics.dataSubjectRequestsNextDue.set(earliestDueAt === null ? 0 : (earliestDueAt - now) / 1000);
      },
      () => {
        metrics.dataSubjectRequestsOpen.reset();
        metrics.dataSubjectRequestsOldestAge.reset();
        metrics.dataSubjectRequestsNextDue.reset();
      },
    );
  }

  /** Requests verified and not completed: how many, the oldest verification and the earliest due date. */
  async openSummary(): Promise<{ open: number; oldestVerifiedAt: number | null; earliestDueAt: number | null }> {
    const [row] = await this.sql.query<{ n: unknown; oldest: unknown; due: unknown }>(
      "SELECT COUNT(*) AS n, MIN(verified_at) AS oldest, MIN(due_at) AS due FROM data_subject_requests WHERE status = 'verified'",
    );
    return { open: Number(row.n), oldestVerifiedAt: time(row.oldest), earliestDueAt: time(row.due) };
  }

  private p(n: number): string {
    return this.sql.p(n);
  }

  /** An audit row of a request done at once (an operator's): verified when made, due then. */
  insertDone(
    row: { id: string; type: string; subjectHmac: string; clientId: string | null; requestedAt: number; completedAt: number; addressMasked: string | null },
    leadIds: readonly string[],
    counts: unknown,
  ): Step {
    const p = (n: number) => this.p(n);
    return [
      `INSERT INTO data_subject_requests (id, type, subject_hmac, client_id, requested_at, completed_at, lead_ids, counts, channel, status, verified_at, due_at, address_masked)
        VALUES (${[1, 2, 3, 4, 5, 6, 7, 8].map(p).join(', ')}, 'operator', 'completed', ${p(9)}, ${p(10)}, ${p(11)})`,
      [
        row.id,
        row.type,
        row.subjectHmac,
        row.clientId,
        row.requestedAt,
        row.completedAt,
        JSON.stringify(leadIds),
        JSON.stringify(counts),
        row.requestedAt,
        row.requestedAt + DUE_MS,
        row.addressMasked,
      ],
    ];
  }

  /** An erasure's batch rows, once the request's own row takes their place. */
  deleteBatchRows(ids: readonly string[]): Step {
    return [`DELETE FROM data_subject_requests WHERE type = ${this.p(1)} AND id IN (${this.sql.list(2, ids.length)})`, ['erasure_batch', ...ids]];
  }

  /**
   * A person's request, done: its result in the row, the sealed address gone unless a download still needs it. Once:
   * a second run of the same work (PrivacyRequestsService.resume beside a slow first) leaves the first result.
   */
  complete(id: string, completedAt: number, leadIds: readonly string[], counts: unknown, keepAddress = false): Step {
    const p = (n: number) => this.p(n);
    return [
      `UPDATE data_subject_requests SET status = 'completed', completed_at = ${p(1)}, lead_ids = ${p(2)}, counts = ${p(3)}${keepAddress ? '' : ', address_sealed = NULL'}
        WHERE id = ${p(4)} AND status = 'verified'`,
      [completedAt, JSON.stringify(leadIds), JSON.stringify(counts), id],
    ];
  }

  async insertSelfService(r: NewSelfServiceRequest): Promise<void> {
    const p = (n: number) => this.p(n);
    await this.sql.query(
      `INSERT INTO data_subject_requests (id, type, subject_hmac, client_id, requested_at, completed_at, lead_ids, counts, channel, status, address_masked, expires_at, verification_id, address_sealed)
        VALUES (${p(1)}, ${p(2)}, ${p(3)}, NULL, ${p(4)}, NULL, '[]', '{}', 'self_service', 'identity_unverified', ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)})`,
      [r.id, r.type, r.subjectHmac, r.requestedAt, r.addressMasked, r.expiresAt, r.verificationId, r.addressSealed],
    );
  }

  async findSelfService(id: string): Promise<SelfServiceRequest | undefined> {
    const [row] = await this.sql.query(
      `SELECT id, type, status, requested_at, expires_at, verified_at, verification_id, address_sealed, download_hash, download_expires_at
        FROM data_subject_requests WHERE id = ${this.p(1)} AND channel = 'self_service'`,
      [id],
    );
    if (!row) return undefined;
    return {
      id: String(row.id),
      type: String(row.type),
      status: row.status as RequestStatus,
      requestedAt: Number(row.requested_at),
      expiresAt: Number(row.expires_at),
      verifiedAt: time(row.verified_at),
      verificationId: String(row.verification_id),
      addressSealed: (row.address_sealed as string | null) ?? null,
      downloadHash: (row.download_hash as string | null) ?? null,
      downloadExpiresAt: time(row.download_expires_at),
    };
  }

  /** The person proved the address: once (a racing second proof finds nothing to change); this instance carries it out. */
  async markVerified(id: string, now: number): Promise<boolean> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `UPDATE data_subject_requests SET status = 'verified', verified_at = ${p(1)}, due_at = ${p(2)}, resume_claimed_at = ${p(3)}
        WHERE id = ${p(4)} AND status = 'identity_unverified' RETURNING id`,
      [now, now + DUE_MS, now, id],
    );
    return rows.length === 1;
  }

  /**
   * Erasures and revocations a person verified that are not done, and that no instance took up after `claimedBefore`
   * (the verification takes one up): the instance stopped, or the work failed, before it committed. Oldest first.
   */
  async unfinished(claimedBefore: number, limit: number): Promise<{ id: string; type: UnfinishedType; addressSealed: string }[]> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `SELECT id, type, address_sealed FROM data_subject_requests
        WHERE status = 'verified' AND type IN ('erasure', 'consent_revocation') AND address_sealed IS NOT NULL
          AND COALESCE(resume_claimed_at, verified_at) <= ${p(1)}
        ORDER BY verified_at LIMIT ${p(2)}`,
      [claimedBefore, limit],
    );
    return rows.map((row) => ({ id: row.id as string, type: row.type as UnfinishedType, addressSealed: row.address_sealed as string }));
  }

  /** Takes up an unfinished request (above) for this instance, unless another took it up after `claimedBefore`. */
  async claim(id: string, now: number, claimedBefore: number): Promise<boolean> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `UPDATE data_subject_requests SET resume_claimed_at = ${p(1)}
        WHERE id = ${p(2)} AND status = 'verified' AND COALESCE(resume_claimed_at, verified_at) <= ${p(3)} RETURNING id`,
      [now, id, claimedBefore],
    );
    return rows.length === 1;
  }

  /**
   * The last try of its code was wrong: the request is over, and its address goes; false when its code was used
   * meanwhile (a right try at the same moment wins: it is being carried out).
   */
  async lock(id: string): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE data_subject_requests SET status = 'locked', address_sealed = NULL WHERE id = ${this.p(1)} AND status = 'identity_unverified'
        AND NOT EXISTS (SELECT 1 FROM verification_codes v WHERE v.id = data_subject_requests.verification_id AND v.used_at IS NOT NULL)
        RETURNING id`,
      [id],
    );
    return rows.length === 1;
  }

  /** An access request's download: a token's digest, valid until `expiresAt`. */
  async setDownload(id: string, hash: string, expiresAt: number): Promise<void> {
    const p = (n: number) => this.p(n);
    await this.sql.query(`UPDATE data_subject_requests SET download_hash = ${p(1)}, download_expires_at = ${p(2)} WHERE id = ${p(3)}`, [hash, expiresAt, id]);
  }

  /**
   * Sealed addresses nobody can use any more (an unverified request past its code, a download past its hour), emptied,
   * and requests never verified deleted after 30 days: a few at a time where requests are made, so that no timer is
   * needed (partial indexes keep both from reading the operators' rows).
   */
  async forgetAddresses(now: number, limit: number): Promise<void> {
    const p = (n: number) => this.p(n);
    await this.sql.query(
      `UPDATE data_subject_requests SET address_sealed = NULL WHERE id IN (
        SELECT id FROM data_subject_requests WHERE address_sealed IS NOT NULL
          AND ((status = 'identity_unverified' AND expires_at <= ${p(1)})
            OR (download_expires_at IS NOT NULL AND download_expires_at <= ${p(2)})
            OR ((status = 'completed' OR (status = 'verified' AND type = 'access')) AND download_expires_at IS NULL AND verified_at <= ${p(3)}))
        LIMIT ${p(4)})`,
      // A verified access whose reading failed keeps no address past the hour a download would have had; a verified
      // erasure or revocation keeps it until it is carried out (unfinished()).
      [now, now, now - 3_600_000, limit],
    );
    // Requests nobody verified (anyone can make one, for any address) are not kept: after 30 days they go.
    await this.sql.query(
      `DELETE FROM data_subject_requests WHERE id IN (
        SELECT id FROM data_subject_requests WHERE status IN ('identity_unverified', 'locked') AND requested_at < ${p(1)} LIMIT ${p(2)})`,
      [now - UNVERIFIED_KEPT_MS, limit],
    );
  }

  /**
   * One page of the queue, newest first, after the request `before` (keyset on id, a UUIDv7: the order received).
   * `expired` and `identity_unverified` are told apart by `expires_at` against `now`.
   */
  async queue(statuses: readonly QueueStatus[], limit: number, before: string | null, now: number): Promise<QueueEntry[]> {
    const params: unknown[] = [];
    const param = (value: unknown) => (params.push(value), this.p(params.length));
    const stored = statuses.filter((status) => status !== 'expired' && status !== 'identity_unverified');
    const conditions = stored.length ? [`status IN (${stored.map(param).join(', ')})`] : [];
    if (statuses.includes('identity_unverified')) conditions.push(`(status = 'identity_unverified' AND expires_at > ${param(now)})`);
    if (statuses.includes('expired')) conditions.push(`(status = 'identity_unverified' AND expires_at <= ${param(now)})`);
    const where = [
      `(${conditions.join(' OR ')})`,
      `type NOT IN (${NOT_REQUESTS.map(param).join(', ')})`,
      ...(before === null ? [] : [`id < ${param(before)}`]),
    ];
    const rows = await this.sql.query(
      `SELECT id, type, status, channel, requested_at, verified_at, due_at, completed_at, expires_at, address_masked
        FROM data_subject_requests WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${param(limit)}`,
      params,
    );
    return rows.map((row) => ({
      id: String(row.id),
      type: String(row.type),
      status: row.status === 'identity_unverified' && Number(row.expires_at) <= now ? 'expired' : (row.status as RequestStatus),
      channel: String(row.channel),
      received_at: iso(row.requested_at)!,
      verified_at: iso(row.verified_at),
      due_at: iso(row.due_at),
      completed_at: iso(row.completed_at),
      email_masked: (row.address_masked as string | null) ?? null,
    }));
  }
}

/** How long a request nobody verified (or that five wrong codes locked) is kept: the queue shows it for a month. */
const UNVERIFIED_KEPT_MS = 30 * 24 * 3_600_000;

/** LGPD art. 19 II: the complete answer within 15 days of the request (counted here from the verified identity). */
export const DUE_MS = 15 * 24 * 3_600_000;
