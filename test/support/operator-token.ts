import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { getRepositoryToken } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { OperatorClient } from '../../src/oauth/operator-client.entity.js';
import type { TestApp } from './test-app.js';

/**
 * An access token from the real client-credentials grant, for an operator client with this id (made with these
 * scopes when it does not exist yet), so that tests can name the client_id they expect on stored leads.
 * test/support/operator-clients.ts makes clients the way `npm run clients:create` does.
 */
export async function operatorToken(t: TestApp, scope: string, clientId = `op_${randomUUID()}`): Promise<string> {
  const secret = randomBytes(32).toString('base64url');
  const clients = t.app.get<Repository<OperatorClient>>(getRepositoryToken(OperatorClient));
  const secretHash = createHash('sha256').update(secret).digest('hex');
  const existing = await clients.findOneBy({ clientId });
  if (existing) await clients.update({ clientId }, { secretHash, scopes: scope });
  else {
    await clients.insert({
      clientId,
      name: 'test',
      scopes: scope,
      secretHash,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      createdAt: new Date(),
      rotatedAt: null,
      revokedAt: null,
    });
  }
  const res = await t.http.post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope });
  if (res.status !== 200) throw new Error(`token request answered ${res.status}: ${res.text}`);
  return res.body.access_token as string;
}
