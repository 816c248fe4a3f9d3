import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** The inbox's client at the test provider: what OIDC_CLIENT_ID and OIDC_CLIENT_SECRET name. */
export const OIDC_CLIENT = { OIDC_CLIENT_ID: 'inbox', OIDC_CLIENT_SECRET: 'provider-secret-for-the-inbox-tests' };

export interface OidcProvider {
  stop(): Promise<void>;
}

/**
 * The OpenID Provider of the single sign-on suites (test/support/oidc-provider-server.mjs, oidc-provider) as its own process on
 * `port`, for the inbox's callback `redirectUri`, with its accounts (login → claims); resolves once it listens.
 */
export async function startOidcProvider(port: number, redirectUri: string, accounts: Record<string, object>): Promise<OidcProvider> {
  const settings = { port, clientId: OIDC_CLIENT.OIDC_CLIENT_ID, clientSecret: OIDC_CLIENT.OIDC_CLIENT_SECRET, redirectUri, accounts };
  const child = spawn(process.execPath, ['test/support/oidc-provider-server.mjs', JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'ignore'] });
  let output = '';
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('ready ')) resolve();
    });
    child.once('exit', () => reject(new Error(`the OpenID Provider exited: ${output}`)));
  });
  return {
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill();
      await once(child, 'exit');
    },
  };
}
