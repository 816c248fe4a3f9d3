import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import { foldEmail } from '../leads/lead-rules.js';

export type ClaimStatus = 'pending' | 'confirmed' | 'redeemed' | 'failed' | 'superseded';

export interface ClaimAttempt {
  id: string;
  registrationId: string;
  userCodeMac: string;
  verificationId: string;
  addressSealed: string | null;
  status: ClaimStatus;
  createdAt: number;
  expiresAt: number;
  lastPolledAt: number | null;
}

/** A registration as a claim needs it. */
export interface ClaimableRegistration {
  id: string;
  type: string;
  email: string | null;
  createdAt: number;
  claimTokenExpiresAt: number;
  claimedAt: number | null;
  revoked: boolean;
}

const time = (value: unknown) => (value === null || value === undefined ? null : Number(value));
/** The registration table's timestamps are the driver's date type; claims' are milliseconds. */
const epoch = (value: unknown) =>
  value instanceof Date ? value.getTime() : new Date(String(value).replace(' ', 'T') + (/[Z+]/.test(String(value)) ? '' : 'Z')).getTime();

/** The one home of agent_claims' SQL, and of the claim's writes to agent_registrations (docs/decisions/0041). */
@Injectable()
export class AgentClaimsStore {
  readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new StepTransactions(dataSource);
  }

  private p(n: number): string {
    return this.sql.p(n);
  }

  async registrationByClaimToken(hash: string): Promise<ClaimableRegistration | undefined> {
    const [row] = await this.sql.query(
      `SELECT id, type, email, created_at, claim_token_expires_at, claimed_at, revoked_at FROM agent_registrations WHERE claim_token_hash = ${this.p(1)}`,
      [hash],
    );
    return row && this.registration(row);
  }

  async registrationOf(id: string): Promise<ClaimableRegistration | undefined> {
    const [row] = await this.sql.query(
      `SELECT id, type, email, created_at, claim_token_expires_at, claimed_at, revoked_at FROM agent_registrations WHERE id = ${this.p(1)}`,
      [id],
    );
    return row && this.registration(row);
  }

  private registration(row: Record<string, unknown>): ClaimableRegistration {
    return {
      id: String(row.id),
      type: String(row.type),
      email: (row.email as string | null) ?? null,
      createdAt: epoch(row.created_at),
      claimTokenExpiresAt: epoch(row.claim_token_expires_at),
      claimedAt: time(row.claimed_at),
      revoked: row.revoked_at !== null && row.revoked_at !== undefined,
    };
  }

  /** A new attempt; the registration's earlier ones that are still open end (the newest attempt is the one that counts). */
  async insert(a: Omit<ClaimAttempt, 'lastPolledAt' | 'status'>): Promise<void> {
    const p = (n: number) => this.p(n);
    await this.sql.run(
      function* (this: AgentClaimsStore): Steps<void> {
        yield [
          `UPDATE agent_claims SET status = 'superseded', address_sealed = NULL WHERE registration_id = ${p(1)} AND status IN ('pending', 'confirmed')`,
          [a.registrationId],
        ];
        yield [
          `INSERT INTO agent_claims (id, registration_id, user_code_mac, verification_id, address_sealed, status, created_at, expires_at)
            VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, 'pending', ${p(6)}, ${p(7)})`,
          [a.id, a.registrationId, a.userCodeMac, a.verificationId, a.addressSealed, a.createdAt, a.expiresAt],
        ];
      }.bind(this),
    );
  }

  async attempt(id: string): Promise<ClaimAttempt | undefined> {
    const [row] = await this.sql.query(`SELECT * FROM agent_claims WHERE id = ${this.p(1)}`, [id]);
    return row && this.attemptOf(row);
  }

  /** The registration's newest attempt. */
  async latest(registrationId: string): Promise<ClaimAttempt | undefined> {
    const [row] = await this.sql.query(`SELECT * FROM agent_claims WHERE registration_id = ${this.p(1)} ORDER BY id DESC LIMIT 1`, [registrationId]);
    return row && this.attemptOf(row);
  }

  private attemptOf(row: Record<string, unknown>): ClaimAttempt {
    return {
      id: String(row.id),
      registrationId: String(row.registration_id),
      userCodeMac: String(row.user_code_mac),
      verificationId: String(row.verification_id),
      addressSealed: (row.address_sealed as string | null) ?? null,
      status: row.status as ClaimStatus,
      createdAt: Number(row.created_at),
      expiresAt: Number(row.expires_at),
      lastPolledAt: time(row.last_polled_at),
    };
  }

  /**
   * Records a poll of the token endpoint; false when the previous one was less than `intervalMs` ago (slow_down). One
   * conditional update, so that instances polled at once agree.
   */
  async poll(id: string, now: number, intervalMs: number): Promise<boolean> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `UPDATE agent_claims SET last_polled_at = ${p(1)} WHERE id = ${p(2)} AND (last_polled_at IS NULL OR last_polled_at <= ${p(3)}) RETURNING id`,
      [now, id, now - intervalMs],
    );
    return rows.length === 1;
  }

  /** The owner confirmed on the page: once, while the attempt is open. */
  async confirm(id: string, now: number): Promise<boolean> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `UPDATE agent_claims SET status = 'confirmed', confirmed_at = ${p(1)} WHERE id = ${p(2)} AND status = 'pending' AND expires_at > ${p(3)} RETURNING id`,
      [now, id, now],
    );
    return rows.length === 1;
  }

  /** The fifth wrong code: the attempt is over, unless its code was used meanwhile (a right pair at the same moment wins). */
  async fail(id: string): Promise<void> {
    await this.sql.query(
      `UPDATE agent_claims SET status = 'failed', address_sealed = NULL WHERE id = ${this.p(1)} AND status = 'pending'
        AND NOT EXISTS (SELECT 1 FROM verification_codes v WHERE v.id = agent_claims.verification_id AND v.used_at IS NOT NULL)`,
      [id],
    );
  }

  /**
   * The agent's poll after the owner confirmed: the attempt redeemed and the registration claimed for the address, in
   * one transaction, once (a racing second poll finds nothing to redeem). The address joins the erasure's index.
   */
  async redeem(attempt: ClaimAttempt, address: string, now: number): Promise<boolean> {
    const p = (n: number) => this.p(n);
    const folded = foldEmail(address);
    return this.sql.run(function* (): Steps<boolean> {
      const taken = yield [
        `UPDATE agent_claims SET status = 'redeemed', redeemed_at = ${p(1)}, address_sealed = NULL WHERE id = ${p(2)} AND status = 'confirmed' RETURNING id`,
        [now, attempt.id],
      ];
      if (taken.length === 0) return false;
      yield [
        `UPDATE agent_registrations SET claimed_at = ${p(1)}, verified_email = ${p(2)}, email = ${p(3)} WHERE id = ${p(4)} AND claimed_at IS NULL`,
        [now, address, address, attempt.registrationId],
      ];
      const known = yield [
        `SELECT 1 FROM agent_registration_addresses WHERE registration_id = ${p(1)} AND email_folded = ${p(2)}`,
        [attempt.registrationId, folded],
      ];
      if (known.length === 0) {
        yield [`INSERT INTO agent_registration_addresses (registration_id, email_folded) VALUES (${p(1)}, ${p(2)})`, [attempt.registrationId, folded]];
      }
      return true;
    });
  }
}
