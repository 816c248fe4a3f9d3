// `npm run clients:create|list|rotate|revoke` (operator-clients.command.ts runs it): manages operator clients (OAuth 2.0
// client credentials) in the configured database (DATA_DIR or DATABASE_URL, as the service). A secret goes to standard
// output, as the last line, one JSON object; everything meant for a person goes to standard error. Exit codes: 0 done,
// 1 refused (unknown or revoked client, database), 2 usage (unknown command or option, missing name, unknown scope).
import { OPERATOR_SCOPES } from '../auth/scopes.js';
import { commandArgs, type CommandOutput, type DatabaseCommand, runDatabaseCommand, UsageError } from '../database/database-command.js';
import { OperatorClient } from './operator-client.entity.js';
import { clientNameOf, IssuedCredentials, OperatorClientError, OperatorClients, operatorScopes } from './operator-clients.service.js';

const USAGE = `Usage:
  npm run clients:create -- --name "<name>" --scope "<space-separated scopes>"
  npm run clients:list
  npm run clients:rotate -- <client_id>
  npm run clients:revoke -- <client_id>
Operator scopes: ${OPERATOR_SCOPES.join(' ')}`;

type Run = (clients: OperatorClients, io: CommandOutput) => Promise<void>;

/** The command line as the work to do, checked before the database is opened. */
function parse(argv: string[]): Run {
  const [command, ...rest] = argv;
  const args = (options?: Parameters<typeof commandArgs>[1], positionals = 0) => commandArgs(rest, options, positionals, 'Give one client id.');
  switch (command) {
    case 'create': {
      const { values } = args({ name: { type: 'string' }, scope: { type: 'string' } });
      const name = values.name as string | undefined;
      const scope = values.scope as string | undefined;
      if (!name?.trim()) throw new UsageError('The client needs a name: --name "<name>".');
      if (!scope?.trim()) throw new UsageError(`The client needs scopes: --scope "<space-separated scopes>", of: ${OPERATOR_SCOPES.join(' ')}.`);
      // A bad name or an unknown scope is a usage error, found before the database is opened.
      clientNameOf(name);
      operatorScopes(scope);
      return async (clients, io) => {
        const issued = await clients.create(name, scope);
        io.err(`Created operator client ${issued.client_id} ("${name.trim()}") with scope "${issued.scope}".`);
        printSecret(issued, io);
      };
    }
    case 'list': {
      args();
      return async (clients, io) => {
        const rows = await clients.list();
        for (const row of rows) io.out(JSON.stringify(listing(row)));
        io.err(`${rows.length} operator client${rows.length === 1 ? '' : 's'}, one JSON line each on standard output (secrets are never shown again).`);
      };
    }
    case 'rotate': {
      const [clientId] = args({}, 1).positionals;
      return async (clients, io) => {
        const issued = await clients.rotate(clientId);
        io.err(
          issued.previousSecretExpiresAt
            ? `New secret for ${clientId}; the previous one keeps working until ${issued.previousSecretExpiresAt.toISOString()} (CLIENT_SECRET_GRACE).`
            : `New secret for ${clientId}; the previous one no longer works (CLIENT_SECRET_GRACE=0).`,
        );
        printSecret(issued, io);
      };
    }
    case 'revoke': {
      const [clientId] = args({}, 1).positionals;
      return async (clients, io) => {
        const { revokedAt, already } = await clients.revoke(clientId);
        io.err(
          already
            ? `Client ${clientId} was already revoked on ${revokedAt.toISOString()}.`
            : `Revoked client ${clientId}: its secrets and access tokens stop working now, on every instance.`,
        );
      };
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : 'Name a command.');
  }
}

/** The secret is shown this once: the last line of standard output, for a script to read or a person to copy. */
function printSecret({ client_id, client_secret, scope }: IssuedCredentials, io: CommandOutput): void {
  io.err('The secret below is shown this once and stored only as a hash: keep it in a secret store now.');
  io.out(JSON.stringify({ client_id, client_secret, scope }));
}

function listing(row: OperatorClient) {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  const graceLeft = row.previousSecretExpiresAt && row.previousSecretExpiresAt.getTime() > Date.now();
  return {
    client_id: row.clientId,
    name: row.name,
    scope: row.scopes,
    created_at: iso(row.createdAt),
    rotated_at: iso(row.rotatedAt),
    previous_secret_expires_at: graceLeft ? iso(row.previousSecretExpiresAt) : null,
    revoked_at: iso(row.revokedAt),
  };
}

const CLIENTS: DatabaseCommand<OperatorClients> = {
  usage: USAGE,
  parse,
  entities: [OperatorClient],
  service: (dataSource, config) => new OperatorClients(dataSource.getRepository(OperatorClient), config),
  // A bad name or an unknown scope while parsing is a usage error; an unknown or revoked client, a refusal.
  refusal: OperatorClientError,
};

/** Runs one command line against the database `env` (else the process environment) names; resolves to the exit code. */
export function clientsCommand(argv: string[], env?: Record<string, string | undefined>, io?: CommandOutput): Promise<number> {
  return runDatabaseCommand(CLIENTS, argv, env, io);
}
