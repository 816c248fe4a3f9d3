import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { StepTransactions, Steps } from '../database/step-transaction.js';
import type { Person } from './person.js';
import type { Role } from './roles.js';

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

  async byAddress(emailFolded: string): Promise<Person | undefined> {
    const [row] = await this.sql.query(`SELECT ${COLUMNS} FROM inbox_people WHERE email_folded = ${this.sql.p(1)}`, [emailFolded]);
    return row && toPerson(row);
  }

  /** Every person, by address: a team, not a table that grows with traffic (capped all the same). */
  async list(limit: number): Promise<Person[]> {
    const rows = await this.sql.query(`SELECT ${COLUMNS} FROM inbox_people ORDER BY email_folded LIMIT ${this.sql.p(1)}`, [limit]);
    return rows.map(toPerson);
  }

  async setRole(id: string, role: Role, now: number): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE inbox_people SET role = ${this.sql.p(1)}, updated_at = ${this.sql.p(2)} WHERE id = ${this.sql.p(3)} RETURNING id`,
      [role, now, id],
    );
    return rows.length === 1;
  }

  /** A step of the removal, in the transaction that ends the person's sessions. */
  *remove(id: string): Steps<boolean> {
    const rows = yield [`DELETE FROM inbox_people WHERE id = ${this.sql.p(1)} RETURNING id`, [id]];
    return rows.length === 1;
  }
}
