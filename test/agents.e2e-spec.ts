/** @database agent registrations and their rows */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import type { Response } from 'supertest';
import { CONTRACT, expectContract } from './support/contract.js';
import { freePort } from './support/server-process.js';
import { ON_POSTGRES, startTestApp, TestApp } from './support/test-app.js';

/**
 * Agent registration, token exchange, discovery and bearer authentication (docs/decisions/, records 0005 to 0010):
 * independent OAuth clients (oauth4webapi, openid-client) against a real listening server whose PUBLIC_BASE_URL is the
 * address they call, plus the exact answers of every endpoint through supertest and the contract.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const JSON_UTF8 = 'application/json; charset=utf-8';
const PROBLEM = 'application/problem+json; charset=utf-8';
const LEAD = { nome: 'Maria da Silva', email: 'maria@empresa.com.br' };
/**
 * Members every problem carries (docs/decisions/0005-errors-are-problem-details.md); OAuth errors add error and
 * error_description.
 */
const PROBLEM_MEMBERS = ['code', 'detail', 'hint', 'instance', 'request_id', 'status', 'title', 'type'];
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** Loopback http is fine for these clients only when told so. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

type FieldErrors = [pointer: string, code: string][];

interface Agent {
  registrationId: string;
  assertion: string;
  accessToken: string;
}

describe('agents: registration, token exchange, discovery and bearer authentication', () => {
  let t: TestApp;
  let BASE: string;
  let CHALLENGE: string;

  beforeAll(async () => {
    // The OAuth libraries fetch the URLs the documents name, so PUBLIC_BASE_URL must be the listening origin.
    const port = await freePort();
    BASE = `http://127.0.0.1:${port}`;
    CHALLENGE = `Bearer error="invalid_token", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`;
    // startTestApp's quotas are generous, so the many registrations here never meet a 429.
    t = await startTestApp({ PUBLIC_BASE_URL: BASE });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(() => t.close());

  /** A positional parameter in this database's dialect. */
  const sql = (text: string) => (ON_POSTGRES ? text : text.replace(/\$\d+/g, '?'));
  const registrationRow = async (id: string) => (await t.dataSource.query(sql('SELECT * FROM agent_registrations WHERE id = $1'), [id]))[0];
  const leadRow = async (id: string) => (await t.dataSource.query(sql('SELECT * FROM leads WHERE id = $1'), [id]))[0];

  const register = (body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post('/api/v1/agent/identity')
      .set(headers)
      .send(body as object)
      .then(expectContract);
  const token = (form: Record<string, string> | string, headers: Record<string, string> = {}) =>
    t.http.post('/oauth2/token').set(headers).type('form').send(form).then(expectContract);
  const revoke = (form: Record<string, string> | string) => t.http.post('/oauth2/revoke').type('form').send(form).then(expectContract);
  const postLead = (body: object, headers: Record<string, string> = {}) => t.http.post('/api/v1/lead').set(headers).send(body).then(expectContract);
  const bearer = (accessToken: string) => ({ Authorization: `Bearer ${accessToken}` });

  async function newAgent(body: object = { type: 'anonymous' }): Promise<Agent> {
    const reg = await register(body);
    expect(reg.status).toBe(200);
    const tok = await token({ grant_type: JWT_BEARER, assertion: reg.body.identity_assertion });
    expect(tok.status).toBe(200);
    return { registrationId: reg.body.registration_id, assertion: reg.body.identity_assertion, accessToken: tok.body.access_token };
  }

  function expectInvalidToken(res: Response): void {
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
    expect(res.body).toMatchObject({ code: 'invalid_token', status: 401, type: `${BASE}/docs/errors#invalid_token` });
  }

  /**
   * RFC 6749 §5.2 members and the problem members in one body, never cached
   * (docs/decisions/0006-oauth-errors-carry-both-shapes.md).
   */
  function expectOAuthError(res: Response, error: string, mediaType = PROBLEM): void {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe(mediaType);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description', ...PROBLEM_MEMBERS].sort());
    expect(res.body).toMatchObject({ error, code: error, status: 400, type: `${BASE}/docs/errors#${error}` });
    expect(res.body.error_description).toBe(res.body.detail);
    expect(res.body.error_description).toEqual(expect.any(String));
  }

  function expectValidation(res: Response, errors: FieldErrors): void {
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual(errors);
  }

  describe('the whole flow with independent clients', () => {
    it('discovers, registers, exchanges (oauth4webapi and openid-client), validates, calls, and revokes', async () => {
      const issuer = new URL(BASE);

      // Discover: RFC 8414 and OpenID documents, and the protected resource (RFC 9728).
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }));
      const asOidc = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));
      expect(asOidc).toEqual(as);
      expect(as.issuer).toBe(BASE);
      const rs = await oauth.processResourceDiscoveryResponse(issuer, await oauth.resourceDiscoveryRequest(issuer, INSECURE));
      expect(rs.resource).toBe(BASE);
      expect(rs.authorization_servers).toEqual([as.issuer]);
      expect(as.grant_types_supported).toContain(JWT_BEARER);

      // Register where the metadata says.
      const identityEndpoint = new URL((as.agent_auth as { identity_endpoint: string }).identity_endpoint);
      expect(identityEndpoint.origin).toBe(BASE);
      const reg = await t.http.post(identityEndpoint.pathname).send({ type: 'anonymous', client_name: 'flow agent' }).then(expectContract);
      expect(reg.status).toBe(200);
      const { registration_id: registrationId, identity_assertion: assertion } = reg.body;
      const agentClient: oauth.Client = { client_id: registrationId };

      // Exchange with oauth4webapi.
      const response = await oauth.genericTokenEndpointRequest(as, agentClient, oauth.None(), JWT_BEARER, { assertion }, INSECURE);
      const tokens = await oauth.processGenericTokenEndpointResponse(as, agentClient, response);
      expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'leads:write' });
      expect(tokens.refresh_token).toBeUndefined();
      // Its error path too: these clients ask for application/json and read `error` (a problem+json answer would not parse).
      const refusedGrant = await oauth.genericTokenEndpointRequest(as, agentClient, oauth.None(), JWT_BEARER, { assertion: 'not-a-jwt' }, INSECURE);
      await expect(oauth.processGenericTokenEndpointResponse(as, agentClient, refusedGrant)).rejects.toMatchObject({
        name: 'ResponseBodyError',
        error: 'invalid_grant',
        status: 400,
      });

      // The resource server's view (RFC 9068 §4): typ, iss, aud, exp, signature with the published keys.
      const claims = await oauth.validateJwtAccessToken(
        as,
        new Request(`${BASE}/api/v1/lead`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } }),
        BASE,
        INSECURE,
      );
      expect(claims).toMatchObject({ iss: BASE, aud: BASE, sub: registrationId, client_id: registrationId, scope: 'leads:write' });
      // The assertion is not an access token, for an independent validator either.
      await expect(
        oauth.validateJwtAccessToken(as, new Request(`${BASE}/api/v1/lead`, { headers: { authorization: `Bearer ${assertion}` } }), BASE, INSECURE),
      ).rejects.toThrow(/typ/);

      // Exchange again with openid-client, both discovery algorithms; the assertion is reusable.
      for (const algorithm of ['oidc', 'oauth2'] as const) {
        const config = await client.discovery(issuer, registrationId, undefined, client.None(), { algorithm, execute: [client.allowInsecureRequests] });
        expect(config.serverMetadata().issuer).toBe(BASE);
        const granted = await client.genericGrantRequest(config, JWT_BEARER, { assertion });
        expect(granted).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'leads:write' });
        expect(granted.access_token).not.toBe(tokens.access_token);
        await expect(client.genericGrantRequest(config, JWT_BEARER, { assertion: 'not-a-jwt' })).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
      }

      // Call the API with the token: the lead records which registration sent it; an anonymous lead records none.
      const withToken = await postLead(LEAD, bearer(tokens.access_token));
      expect(withToken.status).toBe(201);
      expect((await leadRow(withToken.body.id)).registration_id).toBe(registrationId);
      const anonymous = await postLead(LEAD);
      expect(anonymous.status).toBe(201);
      expect((await leadRow(anonymous.body.id)).registration_id).toBeNull();

      // Revoke (RFC 7009) with oauth4webapi; the token then meets a challenge an independent parser reads.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, agentClient, oauth.None(), tokens.access_token, INSECURE));
      const refused = await oauth
        .protectedResourceRequest(
          tokens.access_token,
          'POST',
          new URL(`${BASE}/api/v1/lead`),
          new Headers({ 'content-type': 'application/json' }),
          JSON.stringify(LEAD),
          INSECURE,
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const challenge = refused as oauth.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause).toEqual([
        { scheme: 'bearer', parameters: { error: 'invalid_token', resource_metadata: `${BASE}/.well-known/oauth-protected-resource` } },
      ]);
      expect(challenge.response.headers.get('www-authenticate')).toBe(CHALLENGE);
      expectInvalidToken(await postLead(LEAD, bearer(tokens.access_token)));
    });
  });

  describe('discovery documents', () => {
    const cacheable = (res: Response) => {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    };
    const noEmptyArrays = (value: unknown): void => {
      if (Array.isArray(value)) {
        expect(value.length).toBeGreaterThan(0);
        value.forEach(noEmptyArrays);
      } else if (value && typeof value === 'object') Object.values(value).forEach(noEmptyArrays);
    };

    it('/.well-known/oauth-protected-resource is exactly the RFC 9728 document', async () => {
      const res = await t.http.get('/.well-known/oauth-protected-resource').then(expectContract);
      cacheable(res);
      expect(res.body).toStrictEqual({
        resource: BASE,
        authorization_servers: [BASE],
        bearer_methods_supported: ['header'],
        scopes_supported: ['leads:write', 'leads:read', 'leads:export', 'webhooks:manage', 'leads:erase', 'leads:screen', 'notifications:manage'],
        resource_name: 'Leads API',
        resource_documentation: `${BASE}/docs/agents`,
      });
      // Byte for byte: no trailing slash anywhere it could creep in.
      expect(res.text).toContain(`"resource":"${BASE}"`);
      noEmptyArrays(res.body);
    });

    it('/.well-known/oauth-authorization-server is exactly the RFC 8414 document, and openid-configuration is the same', async () => {
      const res = await t.http.get('/.well-known/oauth-authorization-server').then(expectContract);
      cacheable(res);
      expect(res.body).toStrictEqual({
        issuer: BASE,
        token_endpoint: `${BASE}/oauth2/token`,
        jwks_uri: `${BASE}/.well-known/jwks.json`,
        revocation_endpoint: `${BASE}/oauth2/revoke`,
        grant_types_supported: [JWT_BEARER, 'client_credentials', 'urn:workos:agent-auth:grant-type:claim'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        revocation_endpoint_auth_methods_supported: ['none'],
        scopes_supported: ['leads:write', 'leads:read', 'leads:export', 'webhooks:manage', 'leads:erase', 'leads:screen', 'notifications:manage'],
        service_documentation: `${BASE}/docs/agents`,
        agent_auth: {
          identity_endpoint: `${BASE}/api/v1/agent/identity`,
          identity_types_supported: ['anonymous', 'identity_assertion', 'service_auth', 'refresh'],
          identity_assertion: { assertion_types_supported: ['verified_email'] },
          claim_endpoint: `${BASE}/api/v1/agent/identity/claim`,
          claim_types_supported: ['login_hint'],
          claim_grant_type: 'urn:workos:agent-auth:grant-type:claim',
        },
      });
      expect(res.text).toContain(`"issuer":"${BASE}"`);
      noEmptyArrays(res.body);
      // Only what is true: no authorization endpoint, no ID tokens.
      expect(res.body).not.toHaveProperty('authorization_endpoint');
      expect(res.body).not.toHaveProperty('response_types_supported');

      const oidc = await t.http.get('/.well-known/openid-configuration').then(expectContract);
      cacheable(oidc);
      expect(oidc.text).toBe(res.text);
    });

    it('/.well-known/jwks.json publishes one ES256 (assertion) and one RS256 (access token) key, public members only', async () => {
      const res = await t.http.get('/.well-known/jwks.json').then(expectContract);
      cacheable(res);
      const keys: JWK[] = res.body.keys;
      expect(keys).toHaveLength(2);
      for (const key of keys) {
        expect(key).toMatchObject({ kid: expect.any(String), alg: expect.any(String), use: 'sig' });
        for (const member of PRIVATE_JWK_MEMBERS) expect(key).not.toHaveProperty(member);
      }
      expect(keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
      expect(keys.find((k) => k.alg === 'ES256')).toMatchObject({ kty: 'EC', crv: 'P-256' });
      expect(keys.find((k) => k.alg === 'RS256')).toMatchObject({ kty: 'RSA', e: expect.any(String), n: expect.any(String) });
      expect(new Set(keys.map((k) => k.kid)).size).toBe(2);
      noEmptyArrays(res.body);

      // Each kind of token is signed with its own published key.
      const agent = await newAgent();
      expect(decodeProtectedHeader(agent.assertion).kid).toBe(keys.find((k) => k.alg === 'ES256')!.kid);
      expect(decodeProtectedHeader(agent.accessToken).kid).toBe(keys.find((k) => k.alg === 'RS256')!.kid);
      const jwks = createLocalJWKSet(res.body);
      await expect(jwtVerify(agent.assertion, jwks, { issuer: BASE, audience: BASE, typ: 'oauth-id-jag+jwt' })).resolves.toBeDefined();
      await expect(jwtVerify(agent.accessToken, jwks, { issuer: BASE, audience: BASE, typ: 'at+jwt' })).resolves.toBeDefined();
    });
  });

  describe('POST /api/v1/agent/identity', () => {
    const expectRegistered = (res: Response, type: string) => {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(Object.keys(res.body).sort()).toEqual(
        [
          'assertion_expires',
          'claim_token',
          'claim_token_expires',
          'claim_url',
          'identity_assertion',
          'post_claim_scopes',
          'pre_claim_scopes',
          'refresh_token',
          'refresh_token_expires',
          'registration_id',
          'registration_type',
          'scopes',
        ].sort(),
      );
      expect(res.body.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
      expect(res.body).toMatchObject({ registration_type: type, scopes: ['leads:write'] });
      expect(res.body.registration_id).toMatch(/^reg_[A-Za-z0-9_-]{16,}$/);
      expect(res.body.claim_token).toMatch(/^clm_[A-Za-z0-9_-]{24,}$/);
      expect(Date.parse(res.body.claim_token_expires)).toBeGreaterThan(Date.now());
    };

    it('registers an anonymous agent with only its type', async () => {
      const res = await register({ type: 'anonymous' });
      expectRegistered(res, 'anonymous');
      const row = await registrationRow(res.body.registration_id);
      expect(row).toMatchObject({ type: 'anonymous', client_name: null, contacts: null, email: null, scopes: 'leads:write', revoked_at: null });
    });

    it('stores client_name and contacts as sent (trimmed, domains lower-cased), and the claim token only as its SHA-256', async () => {
      const res = await register({ type: 'anonymous', client_name: '  Assistente de Vendas  ', contacts: ['dev@Agencia.COM.br', 'ops@example.com'] });
      expectRegistered(res, 'anonymous');
      const claimToken: string = res.body.claim_token;
      const row = await registrationRow(res.body.registration_id);
      expect(row).toMatchObject({ client_name: 'Assistente de Vendas', email: null });
      expect(JSON.parse(row.contacts)).toEqual(['dev@agencia.com.br', 'ops@example.com']);
      expect(row.claim_token_hash).toBe(createHash('sha256').update(claimToken).digest('hex'));
      for (const value of Object.values(row)) {
        expect(String(value)).not.toContain(claimToken.slice(4));
      }
      expect(Math.abs(new Date(row.claim_token_expires_at).getTime() - Date.parse(res.body.claim_token_expires))).toBeLessThan(1000);
      // Returned once: a second registration gets another claim token.
      const other = await register({ type: 'anonymous' });
      expect(other.body.claim_token).not.toBe(claimToken);
      expect(other.body.registration_id).not.toBe(res.body.registration_id);
    });

    it('accepts a client_name of exactly 100 characters', async () => {
      const res = await register({ type: 'anonymous', client_name: 'ã'.repeat(100) });
      expectRegistered(res, 'anonymous');
      expect((await registrationRow(res.body.registration_id)).client_name).toBe('ã'.repeat(100));
    });

    it('signs an anonymous assertion: typ oauth-id-jag+jwt, kid, iss = aud = base URL, sub, jti, 1 h, no email', async () => {
      const res = await register({ type: 'anonymous' });
      const header = decodeProtectedHeader(res.body.identity_assertion);
      expect(header).toEqual({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: expect.any(String) });
      const claims = decodeJwt(res.body.identity_assertion);
      expect(Object.keys(claims).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'registration_type', 'sub']);
      expect(claims).toMatchObject({ iss: BASE, aud: BASE, sub: res.body.registration_id, registration_type: 'anonymous' });
      expect(claims.jti).toEqual(expect.any(String));
      expect(claims.exp).toBe(claims.iat! + 3600);
      expect(Math.abs(claims.iat! * 1000 - Date.now())).toBeLessThan(10_000);
      expect(Date.parse(res.body.assertion_expires)).toBe(claims.exp! * 1000);
      expect(claims).not.toHaveProperty('email');
      expect(claims).not.toHaveProperty('email_verified');
    });

    it('signs a verified_email assertion with the e-mail (domain lower-cased) and email_verified: false', async () => {
      const res = await register({
        type: 'identity_assertion',
        assertion_type: 'verified_email',
        assertion: ' Integracoes@Agencia-Exemplo.COM.br ',
        client_name: 'Integração CRM',
        contacts: ['crm@agencia-exemplo.com.br'],
      });
      expectRegistered(res, 'identity_assertion');
      expect(decodeProtectedHeader(res.body.identity_assertion)).toMatchObject({ typ: 'oauth-id-jag+jwt', kid: expect.any(String) });
      const claims = decodeJwt(res.body.identity_assertion);
      expect(claims).toMatchObject({
        iss: BASE,
        aud: BASE,
        sub: res.body.registration_id,
        registration_type: 'identity_assertion',
        email: 'Integracoes@agencia-exemplo.com.br',
        email_verified: false,
      });
      expect(claims.exp).toBe(claims.iat! + 3600);
      const row = await registrationRow(res.body.registration_id);
      expect(row).toMatchObject({ type: 'identity_assertion', email: 'Integracoes@agencia-exemplo.com.br', client_name: 'Integração CRM' });
      expect(JSON.parse(row.contacts)).toEqual(['crm@agencia-exemplo.com.br']);
    });

    it('gives every registration its own jti', async () => {
      const [a, b] = await Promise.all([register({ type: 'anonymous' }), register({ type: 'anonymous' })]);
      expect(decodeJwt(a.body.identity_assertion).jti).not.toBe(decodeJwt(b.body.identity_assertion).jti);
    });

    it('ignores the Authorization header, even an invalid one', async () => {
      const res = await register({ type: 'anonymous' }, { Authorization: 'Bearer not-a-token' });
      expectRegistered(res, 'anonymous');
    });

    it('refuses an unknown type with 400 unsupported_identity_type', async () => {
      const res = await register({ type: 'oidc' });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.body).toMatchObject({ code: 'unsupported_identity_type', status: 400, instance: '/api/v1/agent/identity' });
    });

    it.each<[string, unknown, FieldErrors]>([
      ['a missing type', { client_name: 'x' }, [['/type', 'required']]],
      ['a type that is not a string', { type: 5 }, [['/type', 'invalid_type']]],
      ['a client_name that is not a string', { type: 'anonymous', client_name: 5 }, [['/client_name', 'invalid_type']]],
      ['contacts that are not an array', { type: 'anonymous', contacts: 'dev@example.com' }, [['/contacts', 'invalid_type']]],
      [
        'unknown fields',
        { type: 'anonymous', extra: 1, 'a/b': 2 },
        [
          ['/extra', 'unknown_field'],
          ['/a~1b', 'unknown_field'],
        ],
      ],
      ['assertion fields on an anonymous registration', { type: 'anonymous', assertion: 'a@example.com' }, [['/assertion', 'unknown_field']]],
      ['six contacts', { type: 'anonymous', contacts: Array.from({ length: 6 }, (_, i) => `c${i}@example.com`) }, [['/contacts', 'too_many_items']]],
      [
        'bad e-mails in contacts',
        { type: 'anonymous', contacts: ['ok@example.com', 'not-an-email', 7, 'a@b'] },
        [
          ['/contacts/1', 'invalid_format'],
          ['/contacts/2', 'invalid_type'],
          ['/contacts/3', 'invalid_format'],
        ],
      ],
      ['a client_name of 101 characters', { type: 'anonymous', client_name: 'x'.repeat(101) }, [['/client_name', 'too_long']]],
      ['a client_name with a control character', { type: 'anonymous', client_name: 'bad\u0007name' }, [['/client_name', 'invalid_characters']]],
      ['a client_name with a bidi override', { type: 'anonymous', client_name: 'abc\u202Edef' }, [['/client_name', 'invalid_characters']]],
      ['a blank client_name', { type: 'anonymous', client_name: '   ' }, [['/client_name', 'too_short']]],
      [
        'an identity assertion without assertion_type and assertion',
        { type: 'identity_assertion' },
        [
          ['/assertion_type', 'required'],
          ['/assertion', 'required'],
        ],
      ],
      [
        'an assertion_type other than verified_email',
        { type: 'identity_assertion', assertion_type: 'oidc_id_token', assertion: 'a@example.com' },
        [['/assertion_type', 'invalid_format']],
      ],
      [
        'an assertion that is not an e-mail',
        { type: 'identity_assertion', assertion_type: 'verified_email', assertion: 'not-an-email' },
        [['/assertion', 'invalid_format']],
      ],
      [
        'an assertion that is not a string',
        { type: 'identity_assertion', assertion_type: 'verified_email', assertion: ['a@example.com'] },
        [['/assertion', 'invalid_type']],
      ],
    ])('refuses %s with 422 validation_failed and exact pointers', async (_name, body, errors) => {
      const before = Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM agent_registrations'))[0].n);
      const res = await register(body);
      expectValidation(res, errors);
      expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM agent_registrations'))[0].n)).toBe(before);
    });

    it('lists at most 20 field errors', async () => {
      const body = Object.fromEntries([['type', 'anonymous'], ...Array.from({ length: 30 }, (_, i) => [`extra${i}`, i])]);
      const res = await register(body);
      expect(res.status).toBe(422);
      expect(res.body.errors).toHaveLength(20);
      expect(res.body.errors[0]).toEqual({ pointer: '/extra0', code: 'unknown_field', detail: expect.any(String) });
    });

    it('refuses a body that is not JSON with 415, and malformed JSON with 400', async () => {
      const form = await t.http.post('/api/v1/agent/identity').type('form').send('type=anonymous').then(expectContract);
      expect(form.status).toBe(415);
      expect(form.body.code).toBe('unsupported_media_type');
      const malformed = await t.http.post('/api/v1/agent/identity').set('Content-Type', 'application/json').send('{"type":').then(expectContract);
      expect(malformed.status).toBe(400);
      expect(malformed.headers['content-type']).toBe(PROBLEM);
      expect(malformed.body.code).toBe('malformed_json');
      const array = await register([{ type: 'anonymous' }]);
      expect(array.status).toBe(400);
      expect(array.body.code).toBe('body_not_object');
    });
  });

  describe('POST /oauth2/token', () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = await newAgent();
    });

    it('issues an RFC 9068 access token for the assertion, never cached', async () => {
      const res = await token({ grant_type: JWT_BEARER, assertion: agent.assertion });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['pragma']).toBe('no-cache');
      expect(res.body).toStrictEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, scope: 'leads:write' });

      expect(decodeProtectedHeader(res.body.access_token)).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
      const claims = decodeJwt(res.body.access_token);
      expect(Object.keys(claims).sort()).toEqual(['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub']);
      expect(claims).toMatchObject({ iss: BASE, aud: BASE, sub: agent.registrationId, client_id: agent.registrationId, scope: 'leads:write' });
      expect(claims.exp).toBe(claims.iat! + 900);
      expect(claims.jti).not.toBe(decodeJwt(agent.assertion).jti);
    });

    it('exchanges the same assertion again for a different token', async () => {
      const first = await token({ grant_type: JWT_BEARER, assertion: agent.assertion });
      const second = await token({ grant_type: JWT_BEARER, assertion: agent.assertion });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body.access_token).not.toBe(first.body.access_token);
      expect(decodeJwt(second.body.access_token).jti).not.toBe(decodeJwt(first.body.access_token).jti);
    });

    it('grants scope=leads:write and refuses scope=admin with invalid_scope', async () => {
      const ok = await token({ grant_type: JWT_BEARER, assertion: agent.assertion, scope: 'leads:write' });
      expect(ok.status).toBe(200);
      expect(ok.body.scope).toBe('leads:write');
      expectOAuthError(await token({ grant_type: JWT_BEARER, assertion: agent.assertion, scope: 'admin' }), 'invalid_scope');
      expectOAuthError(await token({ grant_type: JWT_BEARER, assertion: agent.assertion, scope: 'leads:write admin' }), 'invalid_scope');
    });

    it('grants a scope named twice once (scope is a set, RFC 6749 §3.3)', async () => {
      const res = await token({ grant_type: JWT_BEARER, assertion: agent.assertion, scope: 'leads:write  leads:write' });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('leads:write');
      expect(decodeJwt(res.body.access_token).scope).toBe('leads:write');
    });

    it('refuses a JSON body with invalid_request', async () => {
      const res = await t.http.post('/oauth2/token').send({ grant_type: JWT_BEARER, assertion: agent.assertion }).then(expectContract);
      expectOAuthError(res, 'invalid_request');
    });

    it.each<[string, string, Record<string, string> | string]>([
      ['a missing grant_type', 'invalid_request', { assertion: 'x.y.z' }],
      ['an empty grant_type (empty counts as absent)', 'invalid_request', 'grant_type=&assertion=x.y.z'],
      ['a missing assertion', 'invalid_request', { grant_type: JWT_BEARER }],
      ['another grant_type', 'unsupported_grant_type', { grant_type: 'password', username: 'a', password: 'b' }],
      ['the authorization_code grant', 'unsupported_grant_type', { grant_type: 'authorization_code', code: 'abc' }],
      ['a repeated grant_type', 'invalid_request', `grant_type=${encodeURIComponent(JWT_BEARER)}&grant_type=${encodeURIComponent(JWT_BEARER)}&assertion=x.y.z`],
      ['a garbage assertion', 'invalid_grant', { grant_type: JWT_BEARER, assertion: 'not-a-jwt' }],
      ['a three-part assertion that is not a JWT', 'invalid_grant', { grant_type: JWT_BEARER, assertion: 'aaa.bbb.ccc' }],
    ])('answers %s with %s', async (_name, error, form) => {
      expectOAuthError(await token(form), error);
    });

    it('refuses a repeated assertion with invalid_request, even when both are valid', async () => {
      const a = encodeURIComponent(agent.assertion);
      expectOAuthError(await token(`grant_type=${encodeURIComponent(JWT_BEARER)}&assertion=${a}&assertion=${a}`), 'invalid_request');
    });

    it('refuses an access token used as an assertion with invalid_grant', async () => {
      expectOAuthError(await token({ grant_type: JWT_BEARER, assertion: agent.accessToken }), 'invalid_grant');
    });

    it('refuses the assertion of a revoked registration with invalid_grant', async () => {
      const revoked = await newAgent();
      expect((await revoke({ token: revoked.assertion })).status).toBe(200);
      const res = await token({ grant_type: JWT_BEARER, assertion: revoked.assertion });
      expectOAuthError(res, 'invalid_grant');
      // The same answer as garbage: nothing says which check failed.
      const garbage = await token({ grant_type: JWT_BEARER, assertion: 'not-a-jwt' });
      expect(res.body.error_description).toBe(garbage.body.error_description);
    });

    it('sends application/json when Accept asks for it, else application/problem+json', async () => {
      const form = { grant_type: JWT_BEARER, assertion: 'not-a-jwt' };
      expectOAuthError(await token(form, { Accept: 'application/json' }), 'invalid_grant', JSON_UTF8);
      expectOAuthError(await token(form, { Accept: 'application/json;q=0.9, text/plain' }), 'invalid_grant', JSON_UTF8);
      expectOAuthError(await token(form, { Accept: 'application/problem+json' }), 'invalid_grant', PROBLEM);
      expectOAuthError(await token(form, { Accept: 'application/json, application/problem+json' }), 'invalid_grant', PROBLEM);
      expectOAuthError(await token(form, { Accept: '*/*' }), 'invalid_grant', PROBLEM);
      expectOAuthError(await token(form), 'invalid_grant', PROBLEM);
    });

    it('answers GET with 405 and Allow: POST', async () => {
      const res = await t.http.get('/oauth2/token').then(expectContract);
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('POST');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    });
  });

  describe('POST /oauth2/revoke', () => {
    it('revokes an access token: 200 with no body, then that token gets 401 invalid_token; other tokens keep working', async () => {
      const agent = await newAgent();
      const sibling = await token({ grant_type: JWT_BEARER, assertion: agent.assertion });
      expect((await postLead(LEAD, bearer(agent.accessToken))).status).toBe(201);

      const res = await revoke({ token: agent.accessToken, token_type_hint: 'access_token' });
      expect(res.status).toBe(200);
      expect(res.text ?? '').toBe('');
      expect(res.headers['cache-control']).toBe('no-store');

      expectInvalidToken(await postLead(LEAD, bearer(agent.accessToken)));
      expectInvalidToken(await t.http.get('/api/v1/info').set(bearer(agent.accessToken)).then(expectContract));
      expect((await postLead(LEAD, bearer(sibling.body.access_token))).status).toBe(201);
      // Revoking twice is still 200.
      expect((await revoke({ token: agent.accessToken })).status).toBe(200);
    });

    it.each([
      ['an unknown JWT-shaped token', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
      ['garbage', 'garbage'],
      ['a very long token', 'a'.repeat(10_000)],
    ])('answers 200 for %s', async (_name, value) => {
      const res = await revoke({ token: value });
      expect(res.status).toBe(200);
      expect(res.text ?? '').toBe('');
    });

    it('revokes the whole registration when given the identity assertion', async () => {
      const agent = await newAgent();
      const other = await token({ grant_type: JWT_BEARER, assertion: agent.assertion });
      const res = await revoke({ token: agent.assertion, token_type_hint: 'identity_assertion' });
      expect(res.status).toBe(200);
      expect((await registrationRow(agent.registrationId)).revoked_at).not.toBeNull();
      expectInvalidToken(await postLead(LEAD, bearer(agent.accessToken)));
      expectInvalidToken(await postLead(LEAD, bearer(other.body.access_token)));
      expectOAuthError(await token({ grant_type: JWT_BEARER, assertion: agent.assertion }), 'invalid_grant');
    });

    it('refuses a missing token with 400 invalid_request', async () => {
      expectOAuthError(await revoke({ token_type_hint: 'access_token' }), 'invalid_request');
      expectOAuthError(await revoke(''), 'invalid_request');
    });

    it('ignores a token_type_hint it does not know and still revokes the token (RFC 7009 §2.1)', async () => {
      const agent = await newAgent();
      const res = await revoke({ token: agent.accessToken, token_type_hint: 'refresh_token' });
      expect(res.status).toBe(200);
      expect((await postLead(LEAD, bearer(agent.accessToken))).status).toBe(401);
    });

    it('refuses a JSON body with invalid_request', async () => {
      const res = await t.http.post('/oauth2/revoke').send({ token: 'x' }).then(expectContract);
      expectOAuthError(res, 'invalid_request');
    });
  });

  describe('bearer tokens on the API', () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = await newAgent();
    });

    it('accepts a valid token on lead (201), sandbox (200) and info (200)', async () => {
      expect((await postLead(LEAD, bearer(agent.accessToken))).status).toBe(201);
      const sandbox = await t.http.post('/api/v1/sandbox').set(bearer(agent.accessToken)).send(LEAD).then(expectContract);
      expect(sandbox.status).toBe(200);
      expect(sandbox.body).toMatchObject({ valid: true, stored: false });
      const info = await t.http.get('/api/v1/info').set(bearer(agent.accessToken)).then(expectContract);
      expect(info.status).toBe(200);
    });

    it('accepts the scheme in any case', async () => {
      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        const res = await postLead(LEAD, { Authorization: `${scheme} ${agent.accessToken}` });
        expect(res.status).toBe(201);
        expect((await leadRow(res.body.id)).registration_id).toBe(agent.registrationId);
      }
    });

    it.each([
      ['"Bearer" with nothing', () => 'Bearer'],
      ['"Bearer" and spaces', () => 'Bearer    '],
      ['Basic credentials', () => 'Basic dXNlcjpwYXNz'],
      ['a token with bad characters', () => `Bearer ${agent.accessToken}!`],
      ['a token with a space inside', () => `Bearer ${agent.accessToken.replace('.', ' .')}`],
      ['a token and extra words', () => `Bearer ${agent.accessToken} extra`],
      ['a token with no scheme', () => agent.accessToken],
      ['a garbage token', () => 'Bearer abc.def.ghi'],
      ['an empty header', () => ''],
    ])('answers 401 invalid_token with the challenge for %s, on lead, sandbox and info', async (_name, header) => {
      const value = header();
      const before = Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM leads'))[0].n);
      expectInvalidToken(await postLead(LEAD, { Authorization: value }));
      expectInvalidToken(await t.http.post('/api/v1/sandbox').set('Authorization', value).send(LEAD).then(expectContract));
      expectInvalidToken(await t.http.get('/api/v1/info').set('Authorization', value).then(expectContract));
      expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM leads'))[0].n)).toBe(before);
    });

    it('answers 401 for two Authorization headers, even two valid ones', async () => {
      const res = await t.http
        .post('/api/v1/lead')
        .set('Authorization', [`Bearer ${agent.accessToken}`, `Bearer ${agent.accessToken}`] as unknown as string)
        .send(LEAD)
        .then(expectContract);
      expectInvalidToken(res);
    });

    it('answers 401 for the identity assertion used as a bearer token', async () => {
      expectInvalidToken(await postLead(LEAD, bearer(agent.assertion)));
      expectInvalidToken(await t.http.get('/api/v1/info').set(bearer(agent.assertion)).then(expectContract));
    });

    it('ignores a token in the query string (header only): the call stays anonymous', async () => {
      const res = await t.http.post(`/api/v1/lead?access_token=${agent.accessToken}`).send(LEAD).then(expectContract);
      expect(res.status).toBe(201);
      expect((await leadRow(res.body.id)).registration_id).toBeNull();
    });

    it('lets /api/v1/health ignore the Authorization header', async () => {
      for (const value of ['Bearer not-a-token', 'Basic dXNlcjpwYXNz', `Bearer ${agent.accessToken}`]) {
        const res = await t.http.get('/api/v1/health').set('Authorization', value).then(expectContract);
        expect(res.status).toBe(200);
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    });
  });

  describe('idempotency keys are scoped to the token subject', () => {
    it('stores two leads for the same key and body from two registrations, and replays within one', async () => {
      const [a, b] = await Promise.all([newAgent(), newAgent()]);
      const key = { 'Idempotency-Key': '"agents-shared-key"' };
      const first = await postLead(LEAD, { ...key, ...bearer(a.accessToken) });
      const second = await postLead(LEAD, { ...key, ...bearer(b.accessToken) });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body.id).not.toBe(first.body.id);
      expect((await leadRow(first.body.id)).registration_id).toBe(a.registrationId);
      expect((await leadRow(second.body.id)).registration_id).toBe(b.registrationId);

      // The same registration with a fresh token is the same caller: a replay, not a new lead.
      const fresh = await token({ grant_type: JWT_BEARER, assertion: a.assertion });
      const replay = await postLead(LEAD, { ...key, ...bearer(fresh.body.access_token) });
      expect(replay.status).toBe(201);
      expect(replay.body).toEqual(first.body);
      // An anonymous caller with the same key is yet another scope.
      const anonymous = await postLead(LEAD, key);
      expect(anonymous.status).toBe(201);
      expect([first.body.id, second.body.id]).not.toContain(anonymous.body.id);
    });
  });

  describe('the agents guide', () => {
    const FLOW = [
      /Discover/,
      /\/\.well-known\/oauth-protected-resource/,
      /\/\.well-known\/oauth-authorization-server/,
      /Register/,
      /\/api\/v1\/agent\/identity/,
      /Exchange/,
      /\/oauth2\/token/,
      /urn:ietf:params:oauth:grant-type:jwt-bearer/,
      /Call the API/,
      /Authorization: Bearer/,
      /Renew/,
      /Revoke/,
      /\/oauth2\/revoke/,
    ];

    it('/docs/agents is HTML with the whole flow, in order, with absolute URLs of this service', async () => {
      const res = await t.http.get('/docs/agents').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toMatch(/^<!doctype html>/i);
      let at = 0;
      for (const step of FLOW) {
        const found = res.text.slice(at).search(step);
        expect({ step: String(step), found: found >= 0 }).toEqual({ step: String(step), found: true });
        at += found;
      }
      expect(res.text).toContain(`${BASE}/.well-known/oauth-authorization-server`);
      expect(res.text).not.toContain('{base_url}');
    });

    it('/auth.md is the same guide as text/markdown', async () => {
      const md = await t.http.get('/auth.md').then(expectContract);
      expect(md.status).toBe(200);
      expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(md.headers['access-control-allow-origin']).toBe('*');
      expect(md.text).toMatch(/^# Agents/);
      for (const step of FLOW) expect(md.text).toMatch(step);
      expect(md.text).not.toContain('{base_url}');
      // Every heading and code line of the Markdown is in the HTML page.
      const html = (await t.http.get('/docs/agents').then(expectContract)).text;
      const headings = md.text
        .split('\n')
        .filter((line) => line.startsWith('#'))
        .map((line) => line.replace(/^#+\s*/, ''));
      expect(headings.length).toBeGreaterThanOrEqual(6);
      for (const heading of headings) expect(html).toContain(heading);
      const curlLines = md.text.split('\n').filter((line) => line.startsWith('curl '));
      expect(curlLines.length).toBeGreaterThan(0);
      for (const line of curlLines) expect(html).toContain(line.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll("'", '&#39;'));
    });

    it('the contract links to /docs/agents from its description', async () => {
      const res = await t.http.get('/docs/openapi-leads.json').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.body.info.description).toMatch(/\]\(\/docs\/agents\)/);
      expect(CONTRACT.info.description).toMatch(/\/docs\/agents/);
    });
  });
});
