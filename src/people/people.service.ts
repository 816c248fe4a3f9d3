import { Injectable, Logger } from '@nestjs/common';
import { uuidv7 } from '../database/uuid-v7.js';
import { fieldFailure, foldEmail, normaliseEmail } from '../leads/lead-rules.js';
import { SessionsStore } from './sessions.store.js';
import type { Person } from './person.js';
import { PeopleStore, type PersonChange } from './people.store.js';
import { Role } from './roles.js';

/** The most people listed (a team: far more would be a mistake to show whole). */
export const PEOPLE_LIST_MAX = 500;

export type AddPersonOutcome = { added: true; person: Person } | { added: false; reason: 'invalid_email' | 'exists' };

const audit = new Logger('PeopleAudit');

/**
 * The inbox's people (issue 35): added by `npm run users:add` or by an admin, found by their folded address at sign-in.
 * Removing a person ends every session of theirs in the same transaction. Audit lines name people by id, never address.
 */
@Injectable()
export class PeopleService {
  constructor(
    private readonly store: PeopleStore,
    private readonly sessions: SessionsStore,
  ) {}

  /** `by`: the user id of the admin who adds (undefined from the command line). */
  async add(email: string, role: Role, by?: string, now = Date.now()): Promise<AddPersonOutcome> {
    if (typeof email !== 'string' || fieldFailure('email', email) !== undefined) return { added: false, reason: 'invalid_email' };
    const normalised = normaliseEmail(email);
    const person: Person = { id: uuidv7(now), email: normalised, role, createdAt: now };
    if (!(await this.store.insert(person, foldEmail(normalised)))) return { added: false, reason: 'exists' };
    audit.log({ audit: 'person_added', user_id: person.id, role, by: by ?? 'command line' }, 'inbox person added');
    return { added: true, person };
  }

  /** The person who signs in with this address, if any (undefined for anything not an address). */
  byAddress(email: string): Promise<Person | undefined> {
    if (typeof email !== 'string' || fieldFailure('email', email) !== undefined) return Promise.resolve(undefined);
    return this.store.byAddress(foldEmail(normaliseEmail(email)));
  }

  /**
   * Binds the person to the provider account (issuer and `sub`) of their first single sign-on; later ones must be that
   * account. False: another account presents this person's address (an admin removes and adds the person to re-link).
   */
  bindProviderAccount(id: string, issuer: string, subject: string): Promise<boolean> {
    return this.store.bindSubject(id, issuer, subject);
  }

  byId(id: string): Promise<Person | undefined> {
    return this.store.byId(id);
  }

  list(): Promise<Person[]> {
    return this.store.list(PEOPLE_LIST_MAX);
  }

  /** Refused ('last_admin') when it would leave no admin. */
  async setRole(id: string, role: Role, by?: string, now = Date.now()): Promise<PersonChange> {
    const store = this.store;
    const change = await this.store.sql.run(() => store.setRole(id, role, now));
    if (change === 'done') audit.log({ audit: 'person_role_changed', user_id: id, role, by: by ?? 'command line' }, 'inbox person role changed');
    return change;
  }

  /** Removes the person and, at once, every session of theirs (on every instance: the sessions are rows); never the last admin. */
  async remove(id: string, by?: string): Promise<PersonChange> {
    const sessions = this.sessions;
    const store = this.store;
    const change = await this.store.sql.run(function* () {
      const removed = yield* store.remove(id);
      if (removed === 'done') yield* sessions.removeAllOf(id);
      return removed;
    });
    if (change === 'done') audit.log({ audit: 'person_removed', user_id: id, by: by ?? 'command line' }, 'inbox person removed');
    return change;
  }
}
