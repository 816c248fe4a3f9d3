import { Injectable } from '@nestjs/common';
import { isCanonicalUuid } from '../database/uuid-v7.js';
import type { Request, Response } from 'express';
import { OPERATOR_SCOPES } from '../auth/scopes.js';
import { PeopleService } from '../people/people.service.js';
import type { PersonChange } from '../people/people.store.js';
import type { Person } from '../people/person.js';
import { isRole, MANAGE_PEOPLE, ROLES } from '../people/roles.js';
import { AppError } from '../problem/app-error.js';
import type { SettingsMessageKey } from './messages/settings.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { field, Form } from './settings-forms.js';
import { PageState, SettingsPage } from './settings-page.js';

const LIST = '/inbox/settings/people';
const NOTICES = { added: 'people.notice.added', role: 'people.notice.role', removed: 'people.notice.removed' } as const;

/** The settings areas, each with the scopes its page needs (the API's for the same work; people and clients: admins). */
const SECTIONS: readonly { name: string; scopes: readonly string[] }[] = [
  { name: 'people', scopes: [MANAGE_PEOPLE] },
  { name: 'recipients', scopes: ['notifications:manage'] },
  { name: 'webhooks', scopes: ['webhooks:manage'] },
  { name: 'clients', scopes: OPERATOR_SCOPES },
];

/**
 * The settings index and the people page (admins): src/people/'s PeopleService, which ends a removed person's sessions
 * in the removal's transaction and writes the audit line (the acting admin by user id). The last admin stays one.
 */
@Injectable()
export class SettingsPeople {
  constructor(
    private readonly people: PeopleService,
    private readonly page: SettingsPage,
  ) {}

  /** What this person may manage; a viewer gets the page saying there is nothing. */
  index(req: Request, res: Response, person: PersonPrincipal): void {
    const sections = SECTIONS.filter((section) => section.scopes.every((scope) => person.scopes.includes(scope))).map((section) => section.name);
    this.page.render(req, res, 'settings', 'settings.title', { sections });
  }

  async list(req: Request, res: Response, state: PageState = this.page.notice(req, NOTICES)): Promise<void> {
    const people = await this.people.list();
    this.page.render(req, res, 'settings-people', 'settings.people', { people, roles: ROLES }, state);
  }

  async add(req: Request, res: Response, person: PersonPrincipal, form: Form): Promise<void> {
    const email = field(form, 'email') ?? '';
    const role = field(form, 'role');
    const problem = (name: string, message: SettingsMessageKey, status = 422) =>
      this.list(req, res, { problem: { status, errors: [{ field: name, message }] }, values: form });
    if (!isRole(role)) return problem('role', 'error.invalid_value');
    const outcome = await this.people.add(email, role, person.userId);
    if (!outcome.added) return outcome.reason === 'exists' ? problem('email', 'people.error.exists', 409) : problem('email', 'error.invalid_format');
    this.page.redirect(res, `${LIST}?notice=added`);
  }

  async changeRole(req: Request, res: Response, person: PersonPrincipal, id: string, form: Form): Promise<void> {
    const role = field(form, 'role');
    if (!isRole(role)) return this.list(req, res, { problem: { status: 422, errors: [{ field: 'role', message: 'error.invalid_value' }] } });
    const target = await this.find(id);
    if (this.refused(await this.people.setRole(target.id, role, person.userId))) return this.refuseLastAdmin(req, res);
    this.page.redirect(res, `${LIST}?notice=role`);
  }

  async remove(req: Request, res: Response, person: PersonPrincipal, id: string): Promise<void> {
    const target = await this.find(id);
    if (this.refused(await this.people.remove(target.id, person.userId))) return this.refuseLastAdmin(req, res);
    this.page.redirect(res, `${LIST}?notice=removed`);
  }

  private async find(id: string): Promise<Person> {
    const canonical = id.toLowerCase();
    const person = isCanonicalUuid(canonical) ? await this.people.byId(canonical) : undefined;
    if (!person) throw gone();
    return person;
  }

  /** Whether the store refused the change as the last admin's (the check is in its transaction); gone if the person is. */
  private refused(change: PersonChange): boolean {
    if (change === 'missing') throw gone();
    return change === 'last_admin';
  }

  private refuseLastAdmin(req: Request, res: Response): Promise<void> {
    return this.list(req, res, { problem: { status: 409, errors: [{ field: null, message: 'people.error.last_admin' }] } });
  }
}

function gone(): AppError {
  return new AppError('not_found', 'No person of the inbox has this id.');
}
