import { Injectable } from '@nestjs/common';
import { AppError } from '../problem/app-error.js';
import { OperatorClientError, OperatorClients } from '../oauth/operator-clients.service.js';
import { Actor, auditSettings } from './settings-audit.js';
import { clientCreateArguments, clientFormProblem, Form, FormProblem } from './settings-forms.js';

const CLIENT_ID = /^op_[A-Za-z0-9_-]{1,61}$/;

/** One client as its row on the page shows it: never a secret or a hash. */
export interface ClientRow {
  clientId: string;
  name: string;
  scopes: string[];
  createdAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * The API clients page's data: the OperatorClients of `npm run clients:*`, with their rules (scopes, names), an audit
 * line naming the person for each change. A secret goes to the answer page alone, never to a log.
 */
@Injectable()
export class SettingsClients {
  constructor(private readonly clients: OperatorClients) {}

  async list(): Promise<ClientRow[]> {
    return (await this.clients.list()).map((row) => ({
      clientId: row.clientId,
      name: row.name,
      scopes: row.scopes.split(' '),
      createdAt: row.createdAt,
      rotatedAt: row.rotatedAt,
      revokedAt: row.revokedAt,
    }));
  }

  /** The new client's id and secret, or what is wrong with the form. */
  async create(actor: Actor, form: Form): Promise<{ problem: FormProblem } | { issued: { client_id: string; client_secret: string; scope: string } }> {
    const problem = clientFormProblem(form);
    if (problem) return { problem };
    const { name, scope } = clientCreateArguments(form);
    const issued = await this.clients.create(name, scope);
    auditSettings(actor, 'client_created', { client_id: issued.client_id, scope: issued.scope });
    return { issued };
  }

  async rotate(actor: Actor, clientId: string) {
    const issued = await this.clients.rotate(possibleId(clientId)).catch(notFound);
    auditSettings(actor, 'client_secret_rotated', { client_id: clientId });
    return issued;
  }

  async revoke(actor: Actor, clientId: string): Promise<void> {
    const { already } = await this.clients.revoke(possibleId(clientId)).catch(notFound);
    if (!already) auditSettings(actor, 'client_revoked', { client_id: clientId });
  }
}

/** An id this service could have made (`op_` and base64url); any other is no client's, and is not looked up. */
function possibleId(clientId: string): string {
  if (!CLIENT_ID.test(clientId)) throw new AppError('not_found', 'There is no live client with this id.');
  return clientId;
}

/** The command line's refusals (no such client, revoked) are the page's 404. */
function notFound(error: unknown): never {
  if (error instanceof OperatorClientError) throw new AppError('not_found', 'There is no live client with this id.');
  throw error;
}
