import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import type { Role } from './roles.js';

/** A live session as the guard needs it: whose it is, with that person's role read at the same time. */
export interface SessionRow {
  personId: string;
  role: Role;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

/** The one home of inbox_sessions' SQL: the sessions of the inbox's people (src/inbox/inbox-sessions.service.ts). Sessions are found by the SHA-256 of their id, never the id. */
@Injectable()
export class SessionsStore {
  readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new StepTransactions(dataSource);
  }

  private p(n: number): string {
    return this.sql.p(n);
  }

  async insert(idHash: string, personId: string, now: number, expiresAt: number): Promise<void> {
    const p = (n: number) => this.p(n);
    await this.sql.query(
      `INSERT INTO inbox_sessions (id_hash, person_id, created_at, last_seen_at, expires_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)})`,
      [idHash, personId, now, now, expiresAt],
    );
  }

  /** The session and its person's current role: a removed person has no row to join, so no session. */
  async find(idHash: string): Promise<SessionRow | undefined> {
    const [row] = await this.sql.query(
      `SELECT s.person_id, p.role, s.created_at, s.last_seen_at, s.expires_at
       FROM inbox_sessions s JOIN inbox_people p ON p.id = s.person_id WHERE s.id_hash = ${this.p(1)}`,
      [idHash],
    );
    if (!row) return undefined;
    return {
      personId: String(row.person_id),
      role: row.role as Role,
      createdAt: Number(row.created_at),
      lastSeenAt: Number(row.last_seen_at),
      expiresAt: Number(row.expires_at),
    };
  }

  async touch(idHash: string, now: number): Promise<void> {
    await this.sql.query(`UPDATE inbox_sessions SET last_seen_at = ${this.p(1)} WHERE id_hash = ${this.p(2)}`, [now, idHash]);
  }

  async remove(idHash: string): Promise<void> {
    await this.sql.query(`DELETE FROM inbox_sessions WHERE id_hash = ${this.p(1)}`, [idHash]);
  }

  /** A step: every session of a person, in the transaction that removes them (no reliance on the foreign key's cascade). */
  *removeAllOf(personId: string): Steps<void> {
    yield [`DELETE FROM inbox_sessions WHERE person_id = ${this.p(1)}`, [personId]];
  }

  /** Sessions past either timeout; a few at a time, so no statement grows with the table. */
  async purge(idleBefore: number, now: number, limit: number): Promise<number> {
    const p = (n: number) => this.p(n);
    const rows = await this.sql.query(
      `DELETE FROM inbox_sessions WHERE id_hash IN (SELECT id_hash FROM inbox_sessions WHERE last_seen_at < ${p(1)} OR expires_at <= ${p(2)} LIMIT ${p(3)}) RETURNING id_hash`,
      [idleBefore, now, limit],
    );
    return rows.length;
  }
}
