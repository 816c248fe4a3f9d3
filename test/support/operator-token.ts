import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { KeyStore } from '../../src/oauth/key-store.service.js';
import type { TestApp } from './test-app.js';

/**
 * An access token as the client-credentials grant issues it to an operator client: signed with the service's current
 * access-token key, `sub` and `client_id` the client, `kind: "operator"` and the scopes.
 */
export async function operatorToken(t: TestApp, scope: string, clientId = `op_${randomUUID()}`): Promise<string> {
  const { kid, alg, key } = await t.app.get(KeyStore).signingKey('access_token');
  return new SignJWT({ client_id: clientId, scope, kind: 'operator' })
    .setProtectedHeader({ alg, typ: 'at+jwt', kid })
    .setIssuer(t.config.publicBaseUrl)
    .setAudience(t.config.publicBaseUrl)
    .setSubject(clientId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key);
}
