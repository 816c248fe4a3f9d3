import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Subscription } from '../outbox/channel.js';
import { Step, StepTransactions, Steps } from '../database/step-transaction.js';

/** A verification as written: digests, the sealed mail, its times. */
export interface NewVerification {
  id: string;
  tokenHash: string;
  purpose: string;
  subject: string | null;
  addressMac: string;
  codeMac: string;
  mailSealed: string;
  createdAt: number;
  expiresAt: number;
}

/** A verification as the mail channel needs it for an attempt. */
export interface PendingMail {
  id: string;
  mailSealed: string | null;
  expiresAt: number;
  usedAt: number | null;
  failingSince: number | null;
}

/** The event of a verification's one mail (an outbox message aimed at the verification itself). */
export const VERIFICATION_EVENT = 'verification.code';

/** The one home of verification_codes' SQL (src/verification/). */
@Injectable()
export class VerificationStore {
  readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new StepTransactions(dataSource);
  }

  private p(n: number): string {
    return this.sql.p(n);
  }

  /**
   * On PostgreSQL, makes the transaction's counts and insert one at a time across instances (a transaction-scoped
   * advisory lock): at READ COMMITTED, two starts at once would each count without the other and both pass a limit.
   * SQLite's one writer does this already.
   */
  *serialise(): Steps<void> {
    if (this.sql.postgres) yield ['SELECT pg_advisory_xact_lock(7426825)', []];
  }

  /** Codes of one purpose made since `since`, for every address (the daily cap: each purpose its own). */
  *countSince(purpose: string, since: number): Steps<number> {
    const [row] = yield [`SELECT COUNT(*) AS n FROM verification_codes WHERE purpose = ${this.p(1)} AND created_at >= ${this.p(2)}`, [purpose, since]];
    return Number(row.n);
  }

  /**
   * Codes of one purpose made for one address (by its keyed digest) since `since`, and the wrong tries spent on them: a
   * purpose anyone can start (a privacy request) never locks a person out of another (the inbox's sign-in).
   */
  *countForAddress(addressMac: string, purpose: string, since: number): Steps<{ codes: number; tries: number }> {
    const [row] = yield [
      // A used code's last try was right: only the wrong ones count.
      `SELECT COUNT(*) AS n, COALESCE(SUM(attempts), 0) - COUNT(used_at) AS tries FROM verification_codes
        WHERE address_mac = ${this.p(1)} AND purpose = ${this.p(2)} AND created_at >= ${this.p(3)}`,
      [addressMac, purpose, since],
    ];
    return { codes: Number(row.n), tries: Number(row.tries) };
  }

  *insert(v: NewVerification): Steps<void> {
    const p = (n: number) => this.p(n);
    yield [
      `INSERT INTO verification_codes (id, token_hash, purpose, subject, address_mac, code_mac, attempts, mail_sealed, created_at, expires_at)
       VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, 0, ${p(7)}, ${p(8)}, ${p(9)})`,
      [v.id, v.tokenHash, v.purpose, v.subject, v.addressMac, v.codeMac, v.mailSealed, v.createdAt, v.expiresAt],
    ];
  }

  /**
   * Spends one try of a live verification (unused, unexpired, under the tries allowed), atomically, so that parallel
   * guesses cannot share a try; undefined when there is none to spend.
   */
  async spendTry(
    key: { tokenHash: string } | { id: string },
    purpose: string,
    maxTries: number,
    now: number,
  ): Promise<{ id: string; subject: string | null; codeMac: string; attempts: number } | undefined> {
    const p = (n: number) => this.p(n);
    const [row] = await this.sql.query(
      `UPDATE verification_codes SET attempts = attempts + 1
       WHERE ${'id' in key ? 'id' : 'token_hash'} = ${p(1)} AND purpose = ${p(2)} AND used_at IS NULL AND attempts < ${p(3)} AND expires_at > ${p(4)}
       RETURNING id, subject, code_mac, attempts`,
      ['id' in key ? key.id : key.tokenHash, purpose, maxTries, now],
    );
    return row && { id: String(row.id), subject: (row.subject as string | null) ?? null, codeMac: String(row.code_mac), attempts: Number(row.attempts) };
  }

  /** Marks it used, once (a second, racing use finds nothing); its mail, if still unsent, is not sent any more. */
  async use(id: string, now: number): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE verification_codes SET used_at = ${this.p(1)}, mail_sealed = NULL WHERE id = ${this.p(2)} AND used_at IS NULL RETURNING id`,
      [now, id],
    );
    return rows.length === 1;
  }

  /** The verifications whose mail is still to be sent: the subscribers of their one message each. */
  *pendingMails(): Steps<Subscription[]> {
    const rows = yield ['SELECT id, created_at FROM verification_codes WHERE mail_sealed IS NOT NULL', []];
    return rows.map((row) => ({ id: String(row.id), events: [VERIFICATION_EVENT], enabled: true, createdAt: Number(row.created_at) }));
  }

  async load(ids: readonly string[]): Promise<PendingMail[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.query(
      `SELECT id, mail_sealed, expires_at, used_at, failing_since FROM verification_codes WHERE id IN (${this.sql.list(1, ids.length)})`,
      [...ids],
    );
    return rows.map((row) => ({
      id: String(row.id),
      mailSealed: (row.mail_sealed as string | null) ?? null,
      expiresAt: Number(row.expires_at),
      usedAt: row.used_at === null ? null : Number(row.used_at),
      failingSince: row.failing_since === null ? null : Number(row.failing_since),
    }));
  }

  /** The sealed address and code are gone once the mail is sent, or will never be. */
  async scrub(id: string): Promise<void> {
    await this.sql.query(`UPDATE verification_codes SET mail_sealed = NULL WHERE id = ${this.p(1)}`, [id]);
  }

  async any(): Promise<boolean> {
    return (await this.sql.query('SELECT 1 FROM verification_codes WHERE mail_sealed IS NOT NULL LIMIT 1')).length > 0;
  }

  failing(id: string, now: number): Step {
    return [`UPDATE verification_codes SET failing_since = ${this.p(1)} WHERE id = ${this.p(2)} AND failing_since IS NULL`, [now, id]];
  }

  recovered(id: string): Step {
    return [`UPDATE verification_codes SET failing_since = NULL WHERE id = ${this.p(1)}`, [id]];
  }

  disable(id: string): Step {
    return [`UPDATE verification_codes SET mail_sealed = NULL WHERE id = ${this.p(1)}`, [id]];
  }

  /** Verifications older than `before` (past the day the cap counts), a batch at a time. */
  async purge(before: number, limit: number): Promise<number> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `DELETE FROM verification_codes WHERE id IN (SELECT id FROM verification_codes WHERE created_at < ${p(1)} LIMIT ${p(2)}) RETURNING id`,
      [before, limit],
    );
    return rows.length;
  }
}
