import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import type { Person } from './person.js';
import type { Role } from './roles.js';

/** What a role change or removal did: refused when it would leave no admin. */
export type PersonChange = 'done' | 'missing' | 'last_admin';

const COLUMNS = 'id, email, role, created_at';

function toPerson(row: Record<string, unknown>): Person {
  return { id: String(row.id), email: String(row.email), role: row.role as Role, createdAt: Number(row.created_at) };
}

/** The one home of inbox_people's SQL (src/people/). */
@Injectable()
export class PeopleStore {
  readonly sql: StepTransactions;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new StepTransactions(dataSource);
  }

  async insert(person: Person, emailFolded: string): Promise<boolean> {
    const p = (n: number) => this.sql.p(n);
    const rows = await this.sql.query(
      `INSERT INTO inbox_people (id, email, email_folded, role, created_at, updated_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})
       ON CONFLICT (email_folded) DO NOTHING RETURNING id`,
      [person.id, person.email, emailFolded, person.role, person.createdAt, person.createdAt],
    );
    return rows.length === 1;
  }

  async byId(id: string): Promise<Person | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM inbox_people WHERE id = ${this.sql.p(1)}`, [id]);
    return row && toPerson(row);
  }

  /** The provider account the person signs in with from now on, unless one is already bound: whether it is theirs. */
  async bindSubject(id: string, issuer: string, subject: string): Promise<boolean> {
    const p = (n: number) => this.sql.p(n);
    await this.sql.query(`UPDATE inbox_people SET oidc_issuer = ${p(1)}, oidc_subject = ${p(2)} WHERE id = ${p(3)} AND oidc_subject IS NULL`, [
      issuer,
      subject,
      id,
    ]);
    const [row] = await this.sql.query(`SELECT oidc_issuer, oidc_subject FROM inbox_people WHERE id = ${p(1)}`, [id]);
    return row !== undefined && row.oidc_issuer === issuer && row.oidc_subject === subject;
  }

  async byAddress(emailFolded: string): Promise<Person | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM inbox_people WHERE email_folded = ${this.sql.p(1)}`, [emailFolded]);
    return row && toPerson(row);
  }

  /** Every person, by address: a team, not a table that grows with traffic (capped all the same). */
  async list(limit: number): Promise<Person[]> {
    const rows = await this.sql.query(`SELECT ${COLUMNS} FROM inbox_people ORDER BY email_folded LIMIT ${this.sql.p(1)}`, [limit]);
    return rows.map(toPerson);
  }

  /** A role change, refused when it would leave no admin (the check and the change in one transaction: lastAdminGuard). */
  *setRole(id: string, role: Role, now: number): Steps<PersonChange> {
    const refused = yield* this.lastAdminGuard(id, role !== 'admin');
    if (refused) return refused;
    yield [`UPDATE inbox_people SET role = ${this.sql.p(1)}, updated_at = ${this.sql.p(2)} WHERE id = ${this.sql.p(3)}`, [role, now, id]];
    return 'done';
  }

  /** A step of the removal, in the transaction that ends the person's sessions; refused for the last admin. */
  *remove(id: string): Steps<PersonChange> {
    const refused = yield* this.lastAdminGuard(id, true);
    if (refused) return refused;
    yield [`DELETE FROM inbox_people WHERE id = ${this.sql.p(1)}`, [id]];
    return 'done';
  }

  /**
   * Whether the person is missing, or the last admin when `demotes` (their change would leave none). On PostgreSQL the
   * admins' rows are locked first, so two admins demoting each other at once take turns and the second sees the first's
   * change (READ COMMITTED reads afresh per statement); SQLite runs one writer's transaction at a time.
   */
  private *lastAdminGuard(id: string, demotes: boolean): Steps<'missing' | 'last_admin' | undefined> {
    if (this.sql.postgres) yield [`SELECT id FROM inbox_people WHERE role = 'admin' FOR UPDATE`, []];
    const [target] = yield [
      `SELECT role, (SELECT count(*) FROM inbox_people WHERE role = 'admin') AS admins FROM inbox_people WHERE id = ${this.sql.p(1)}`,
      [id],
    ];
    if (!target) return 'missing';
    return demotes && target.role === 'admin' && Number(target.admins) <= 1 ? 'last_admin' : undefined;
  }
}
