import { randomUUID } from 'node:crypto';
import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import { SignJWT } from 'jose';
import type { Response } from 'supertest';
import { OptionalBearer, RequireScopes } from '../src/auth/bearer.guard.js';
import { principalOf } from '../src/auth/principal.js';
import { KeyStore } from '../src/oauth/key-store.service.js';
import { newOperator } from './support/operator-clients.js';
import { startAppWith, TestApp } from './support/test-app.js';

/**
 * The bearer guard's two decorators on routes that exist only here (no production route requires a scope yet), in the
 * real application: real middleware, guards and filter, tokens issued by the real token endpoint or signed with the
 * service's own access-token key.
 */

const BASE = 'http://leads.test';
const RESOURCE_METADATA = `resource_metadata="${BASE}/.well-known/oauth-protected-resource"`;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

@Controller('test-scopes')
class ScopedController {
  @Get('read')
  @RequireScopes('leads:read')
  read(@Req() req: Request) {
    return principalOf(req);
  }

  @Get('write')
  @RequireScopes('leads:write')
  write(@Req() req: Request) {
    return principalOf(req);
  }

  @Get('both')
  @RequireScopes('leads:write', 'leads:read')
  both(@Req() req: Request) {
    return principalOf(req);
  }

  @Get('optional')
  @OptionalBearer()
  optional(@Req() req: Request) {
    return principalOf(req);
  }

  @Get('open')
  open(@Req() req: Request) {
    return principalOf(req);
  }
}

describe('auth: @OptionalBearer() and @RequireScopes()', () => {
  let t: TestApp;
  let agent: { registrationId: string; token: string };

  beforeAll(async () => {
    t = await startAppWith([ScopedController]);
    const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
    expect(registration.status).toBe(200);
    const exchange = await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: registration.body.identity_assertion });
    expect(exchange.status).toBe(200);
    agent = { registrationId: registration.body.registration_id, token: exchange.body.access_token };
  });
  afterAll(() => t.close());

  const get = (path: string, token?: string) => {
    const req = t.http.get(`/test-scopes/${path}`);
    return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
  };

  /** A token shaped as an operator client's, signed with the service's current access-token key, but issued by no grant. */
  async function signedOperatorToken(scope: string, clientId = `op_${randomUUID()}`): Promise<string> {
    const { kid, alg, key } = await t.app.get(KeyStore).signingKey('access_token');
    return new SignJWT({ client_id: clientId, scope, kind: 'operator' })
      .setProtectedHeader({ alg, typ: 'at+jwt', kid })
      .setIssuer(BASE)
      .setAudience(BASE)
      .setSubject(clientId)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key);
  }

  function expectProblem(res: Response, status: number, code: string, challenge: string): void {
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers['www-authenticate']).toBe(challenge);
    expect(res.body).toMatchObject({
      status,
      type: `${BASE}/docs/errors#${code}`,
      instance: new URL(res.request.url).pathname,
      request_id: res.headers['x-request-id'],
    });
    expect(res.body.detail).toEqual(expect.any(String));
  }

  describe('a route with @RequireScopes()', () => {
    it('answers a request without a token 401 authentication_required, challenging with the scope but no error (RFC 6750 §3.1)', async () => {
      const res = await get('read');
      expectProblem(res, 401, 'authentication_required', `Bearer scope="leads:read", ${RESOURCE_METADATA}`);
      expect(res.body.detail).toContain('leads:read');
    });

    it.each([
      ['garbage', 'not-a-token'],
      ['a token signed by another key', 'eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJ4In0.c2ln'],
    ])('answers %s 401 invalid_token with the invalid_token challenge', async (_name, token) => {
      expectProblem(await get('read', token), 401, 'invalid_token', `Bearer error="invalid_token", ${RESOURCE_METADATA}`);
    });

    it('answers a valid agent token without the scope 403 insufficient_scope, naming the scope (RFC 6750 §3.1)', async () => {
      const res = await get('read', agent.token);
      expectProblem(res, 403, 'insufficient_scope', `Bearer error="insufficient_scope", scope="leads:read", ${RESOURCE_METADATA}`);
      expect(res.body.detail).toContain('leads:read');
    });

    it('needs every scope it names: the challenge lists them all, the detail the missing one', async () => {
      const res = await get('both', agent.token);
      expectProblem(res, 403, 'insufficient_scope', `Bearer error="insufficient_scope", scope="leads:write leads:read", ${RESOURCE_METADATA}`);
      expect(res.body.detail).toBe('The access token does not grant leads:read, which this operation needs.');
    });

    it('lets an agent token with the scope through, as an agent principal with its token scopes', async () => {
      const res = await get('write', agent.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        kind: 'agent',
        registrationId: agent.registrationId,
        registeredFrom: expect.any(String),
        claimed: false,
        scopes: ['leads:write'],
      });
    });

    it('takes an operator token from its claims: the operator kind, its client and scopes', async () => {
      const { client_id: clientId, token } = await newOperator(t, 'leads:read leads:write');
      const read = await get('read', token);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ kind: 'operator', clientId, scopes: ['leads:read', 'leads:write'] });
      expect((await get('both', token)).status).toBe(200);
    });

    it('holds operators to their scopes too', async () => {
      const res = await get('write', (await newOperator(t, 'leads:read')).token);
      expectProblem(res, 403, 'insufficient_scope', `Bearer error="insufficient_scope", scope="leads:write", ${RESOURCE_METADATA}`);
    });

    it('refuses a well-signed operator token whose client does not exist: a token lives only while its client does', async () => {
      expectProblem(await get('read', await signedOperatorToken('leads:read')), 401, 'invalid_token', `Bearer error="invalid_token", ${RESOURCE_METADATA}`);
    });

    it('never lets an agent token carry an operator scope, whatever its claims say', async () => {
      const { kid, alg, key } = await t.app.get(KeyStore).signingKey('access_token');
      const forged = await new SignJWT({ client_id: agent.registrationId, scope: 'leads:write leads:read' })
        .setProtectedHeader({ alg, typ: 'at+jwt', kid })
        .setIssuer(BASE)
        .setAudience(BASE)
        .setSubject(agent.registrationId)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(key);
      const res = await get('read', forged);
      expectProblem(res, 403, 'insufficient_scope', `Bearer error="insufficient_scope", scope="leads:read", ${RESOURCE_METADATA}`);
      expect((await get('write', forged)).body).toMatchObject({ kind: 'agent', scopes: ['leads:write'] });
    });

    it('refuses an operator token once revoked (RFC 7009), on every later request', async () => {
      const { token } = await newOperator(t, 'leads:read');
      expect((await get('read', token)).status).toBe(200);
      const revoked = await t.http.post('/oauth2/revoke').type('form').send({ token });
      expect(revoked.status).toBe(200);
      expectProblem(await get('read', token), 401, 'invalid_token', `Bearer error="invalid_token", ${RESOURCE_METADATA}`);
      expectProblem(await get('read', token), 401, 'invalid_token', `Bearer error="invalid_token", ${RESOURCE_METADATA}`);
    });
  });

  describe('a route with @OptionalBearer()', () => {
    it('serves an anonymous caller as the anonymous principal, without scopes', async () => {
      const res = await get('optional');
      expect(res.status).toBe(200);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.body).toEqual({ kind: 'anonymous', scopes: [] });
    });

    it('serves a token holder as its principal, and still refuses a bad token', async () => {
      expect((await get('optional', agent.token)).body).toMatchObject({ kind: 'agent', registrationId: agent.registrationId });
      expectProblem(await get('optional', 'not-a-token'), 401, 'invalid_token', `Bearer error="invalid_token", ${RESOURCE_METADATA}`);
    });
  });

  it('does not read the Authorization header of an unmarked route', async () => {
    const res = await get('open', 'not-a-token');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kind: 'anonymous', scopes: [] });
  });
});
