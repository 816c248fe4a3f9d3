import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError } from '../problem/app-error.js';
import { OperatorClientError, OperatorClients, type IssuedCredentials } from '../oauth/operator-clients.service.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { auditSettings } from './settings-audit.js';
import { CLIENT_SCOPES, clientCreateArguments, clientFormProblem, Form } from './settings-forms.js';
import { PageState, SettingsPage } from './settings-page.js';

const LIST = '/inbox/settings/clients';
/** Every id this service makes is `op_` and base64url; any other names no client and is not looked up. */
const CLIENT_ID = /^op_[A-Za-z0-9_-]{1,61}$/;
const NOTICES = { revoked: 'clients.notice.revoked' } as const;

/**
 * The API clients page (admins): the OperatorClients of `npm run clients:*` with their rules (operator scopes, names),
 * and an audit line naming the person for each change. A secret goes to the answer of the POST that made it, once:
 * never to a log, a redirect or a cache.
 */
@Injectable()
export class SettingsClients {
  private readonly tokenUrl: string;

  constructor(
    private readonly clients: OperatorClients,
    private readonly page: SettingsPage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.tokenUrl = `${config.publicBaseUrl}/oauth2/token`;
  }

  async list(req: Request, res: Response, state: PageState = this.page.notice(req, NOTICES)): Promise<void> {
    const clients = (await this.clients.list()).map((row) => ({
      clientId: row.clientId,
      name: row.name,
      scopes: row.scopes.split(' '),
      createdAt: row.createdAt,
      rotatedAt: row.rotatedAt,
      revokedAt: row.revokedAt,
    }));
    const checkedScopes = state.values ? state.values.getAll('scope') : ['leads:read'];
    this.page.render(req, res, 'settings-clients', 'settings.clients', { clients, scopes: CLIENT_SCOPES, checkedScopes }, state);
  }

  async create(req: Request, res: Response, person: PersonPrincipal, form: Form): Promise<void> {
    const problem = clientFormProblem(form);
    if (problem) return this.list(req, res, { problem, values: form });
    const { name, scope } = clientCreateArguments(form);
    const issued = await this.clients.create(name, scope);
    auditSettings(this.page.actor(req, person), 'client_created', { client_id: issued.client_id, scope: issued.scope });
    this.showSecret(req, res, 'clients.secret.created', issued);
  }

  async rotate(req: Request, res: Response, person: PersonPrincipal, clientId: string): Promise<void> {
    const issued = await this.clients.rotate(possibleId(clientId)).catch(notFound);
    auditSettings(this.page.actor(req, person), 'client_secret_rotated', { client_id: issued.client_id });
    this.showSecret(req, res, 'clients.secret.rotated', issued, issued.previousSecretExpiresAt);
  }

  async revoke(req: Request, res: Response, person: PersonPrincipal, clientId: string): Promise<void> {
    const { already } = await this.clients.revoke(possibleId(clientId)).catch(notFound);
    if (!already) auditSettings(this.page.actor(req, person), 'client_revoked', { client_id: clientId });
    this.page.redirect(res, `${LIST}?notice=revoked`);
  }

  private showSecret(
    req: Request,
    res: Response,
    heading: 'clients.secret.created' | 'clients.secret.rotated',
    issued: IssuedCredentials,
    graceUntil?: Date | null,
  ) {
    this.page.secret(req, res, {
      heading,
      items: [
        { id: 'client-id', label: 'clients.id', value: issued.client_id },
        { id: 'client-secret', label: 'clients.secret.label', value: issued.client_secret },
      ],
      ...(graceUntil === undefined ? {} : graceUntil ? { hint: 'clients.secret.rotated.hint', hintAt: graceUntil } : { hint: 'clients.secret.rotated.now' }),
      example: `curl -u "${issued.client_id}:<secret>" -d grant_type=client_credentials ${this.tokenUrl}`,
      back: LIST,
    });
  }
}

function possibleId(clientId: string): string {
  if (!CLIENT_ID.test(clientId)) throw new AppError('not_found', 'There is no live client with this id.');
  return clientId;
}

/** The command line's refusals (no such client, a revoked one) are the page's 404. */
function notFound(error: unknown): never {
  if (error instanceof OperatorClientError) throw new AppError('not_found', 'There is no live client with this id.');
  throw error;
}
