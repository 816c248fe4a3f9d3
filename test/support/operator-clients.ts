import { clientsCommand as command } from '../../src/oauth/operator-clients.cli.js';
import { IssuedCredentials, OperatorClients } from '../../src/oauth/operator-clients.service.js';
import type { TestApp } from './test-app.js';

export interface Operator extends IssuedCredentials {
  /** An access token of the client credentials grant, with all the client's scopes. */
  token: string;
}

/**
 * An operator client of the test app (as `npm run clients:create` makes one) and a token from the real token endpoint
 * (client_secret_post). An operator token is live only while its client exists and is not revoked, so tests that need
 * one make the client first.
 */
export async function newOperator(t: Pick<TestApp, 'app' | 'http'>, scope: string, name = 'test client'): Promise<Operator> {
  const issued = await t.app.get(OperatorClients).create(name, scope);
  const res = await t.http
    .post('/oauth2/token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: issued.client_id, client_secret: issued.client_secret });
  if (res.status !== 200) throw new Error(`token request answered ${res.status}: ${res.text}`);
  return { ...issued, token: res.body.access_token as string };
}

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
  /** The last line of standard output, parsed, when it is JSON. */
  last?: Record<string, string>;
}

/** A `clients:*` command line in this process, as `npm run clients:<command>` runs it, on the database `env` names. */
export async function clientsCommand(args: string[], env: Record<string, string>): Promise<CommandResult> {
  let stdout = '';
  let stderr = '';
  const status = await command(args, env, { out: (line) => (stdout += `${line}\n`), err: (line) => (stderr += `${line}\n`) });
  return { status, stdout, stderr, last: lastJsonLine(stdout) };
}

export function lastJsonLine(stdout: string): Record<string, string> | undefined {
  const lines = stdout.trim().split('\n');
  try {
    return JSON.parse(lines[lines.length - 1]);
  } catch {
    return undefined;
  }
}
