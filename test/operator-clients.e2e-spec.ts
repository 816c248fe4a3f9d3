/** @database client rows, rotation and revocation in SQL; a NUL byte in an id (PostgreSQL refuses it in text) */
import { createHash } from 'node:crypto';
import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import type { Response } from 'supertest';
import { OptionalBearer } from '../src/auth/bearer.guard.js';
import { callerOf } from '../src/auth/caller.decorator.js';
import { OperatorClient } from '../src/oauth/operator-client.entity.js';
import { OperatorClients } from '../src/oauth/operator-clients.service.js';
import { RateLimit } from '../src/rate-limit/rate-limit.guard.js';
import { expectContract } from './support/contract.js';
import { clientsCommand, newOperator } from './support/operator-clients.js';
import { freePort, GENEROUS_LIMITS } from './support/server-process.js';
import { ON_POSTGRES, startAppWith, startTestApp, TestApp } from './support/test-app.js';

/**
 * Operator clients end to end (docs/decisions/0021-operator-clients-and-client-credentials.md): the `clients:*`
 * commands run in this process on the suite's database, the client credentials grant with both client authentication
 * methods through supertest (every answer held to the contract) and through stock clients over HTTP (oauth4webapi,
 * openid-client), rotation, revocation, the operator rate-limit tier and discovery. `npm run clients:create` as its own
 * process, and the running service's logs without secrets: operator-clients-process.e2e-spec.ts.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const BASIC_CHALLENGE = 'Basic realm="Leads API", charset="UTF-8"';
const PROBLEM = 'application/problem+json; charset=utf-8';
const JSON_UTF8 = 'application/json; charset=utf-8';
const PROBLEM_MEMBERS = ['code', 'detail', 'hint', 'instance', 'request_id', 'status', 'title', 'type'];
const LEAD = { nome: 'Joana Prado', email: 'joana@empresa.com.br' };
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** What `test-caller` answers: the caller a service would get (LeadsService reads clientId from it). */
@Controller('test-caller')
class CallerController {
  @Get()
  @OptionalBearer()
  @RateLimit('api')
  caller(@Req() req: Request) {
    return callerOf(req);
  }
}

/** HTTP Basic as RFC 6749 §2.3.1 has it: each part form-urlencoded, then joined and base64-encoded. */
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('operator clients', () => {
  let t: TestApp;
  let BASE: string;
  let databaseEnv: Record<string, string>;

  beforeAll(async () => {
    // Stock OAuth clients fetch the URLs the discovery document names, so PUBLIC_BASE_URL is the listening origin.
    const port = await freePort();
    BASE = `http://127.0.0.1:${port}`;
    t = await startAppWith([CallerController], { PUBLIC_BASE_URL: BASE });
    await t.app.listen(port, '127.0.0.1');
    databaseEnv = t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : { DATA_DIR: t.config.dataDir };
  });
  afterAll(() => t.close());

  const clients = (args: string[], env: Record<string, string> = {}) => clientsCommand(args, { ...databaseEnv, ...env });
  const token = (form: Record<string, string> | string, headers: Record<string, string> = {}) =>
    t.http.post('/oauth2/token').set(headers).type('form').send(form).then(expectContract);
  const sql = (text: string) => (ON_POSTGRES ? text : text.replace(/\$\d+/g, '?'));
  const clientRow = async (id: string) => (await t.dataSource.query(sql('SELECT * FROM operator_clients WHERE client_id = $1'), [id]))[0];
  const ageOf = (value: unknown) => new Date(value as string | Date).getTime();

  /** A client made by the create command, its credentials read from the last line of its standard output. */
  async function created(scope: string, name = 'CRM sync'): Promise<{ client_id: string; client_secret: string; scope: string }> {
    const result = await clients(['create', '--name', name, '--scope', scope]);
    expect([result.status, result.stderr]).toEqual([0, expect.stringContaining('Created operator client')]);
    return result.last as { client_id: string; client_secret: string; scope: string };
  }

  function expectInvalidClient(res: Response, mediaType = PROBLEM): void {
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe(mediaType);
    expect(res.headers['www-authenticate']).toBe(BASIC_CHALLENGE);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['ratelimit-policy']).toMatch(/^"token";q=\d+;w=60$/);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'Client authentication failed.',
      type: `${BASE}/docs/errors#invalid_client`,
      title: 'Invalid client',
      status: 401,
      detail: 'Client authentication failed.',
      code: 'invalid_client',
      hint: expect.stringContaining('client_secret'),
      instance: '/oauth2/token',
      request_id: res.headers['x-request-id'],
    });
  }

  function expectOAuthError(res: Response, error: string, detail?: RegExp): void {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description', ...PROBLEM_MEMBERS].sort());
    expect(res.body).toMatchObject({ error, code: error, status: 400 });
    if (detail) expect(res.body.detail).toMatch(detail);
  }

  describe('the clients:* commands', () => {
    it('clients:create prints the credentials as the last line of standard output, and stores only the SHA-256 of the secret', async () => {
      const result = await clients(['create', '--name', 'Marketing CRM', '--scope', 'leads:read leads:export']);
      expect(result.status).toBe(0);
      expect(Object.keys(result.last!)).toEqual(['client_id', 'client_secret', 'scope']);
      const { client_id: clientId, client_secret: secret, scope } = result.last!;
      expect(clientId).toMatch(/^op_[\w-]{22}$/);
      expect(secret).toMatch(/^[\w-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(scope).toBe('leads:read leads:export');
      expect(result.stderr).toContain(`Created operator client ${clientId} ("Marketing CRM")`);
      expect(result.stderr).not.toContain(secret);

      const row = await clientRow(clientId);
      expect(row).toMatchObject({ name: 'Marketing CRM', scopes: 'leads:read leads:export', previous_secret_hash: null, revoked_at: null, rotated_at: null });
      expect(row.secret_hash).toBe(createHash('sha256').update(secret).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(secret);
    });

    it('clients:list prints one JSON line per client, never a secret or hash', async () => {
      const issued = await created('leads:write', 'Importer');
      const result = await clients(['list']);
      expect(result.status).toBe(0);
      const listed = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(listed).toContainEqual({
        client_id: issued.client_id,
        name: 'Importer',
        scope: 'leads:write',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        rotated_at: null,
        previous_secret_expires_at: null,
        revoked_at: null,
      });
      expect(result.stdout).not.toContain(issued.client_secret);
      expect(result.stdout).not.toContain((await clientRow(issued.client_id)).secret_hash);
      expect(result.stderr).toMatch(/^\d+ operator clients?, one JSON line each/);
    });

    it.each<[string, string[], number, RegExp]>([
      ['no name', ['create', '--scope', 'leads:read'], 2, /needs a name: --name/],
      ['an empty name', ['create', '--name', ' ', '--scope', 'leads:read'], 2, /needs a name/],
      ['no scope', ['create', '--name', 'x'], 2, /needs scopes: --scope/],
      ['an unknown scope', ['create', '--name', 'x', '--scope', 'leads:read leads:admin'], 2, /Unknown scope leads:admin; operator scopes are: leads:read /],
      ['an unknown option', ['create', '--name', 'x', '--scope', 'leads:read', '--secret', 'mine'], 2, /Unknown option '--secret'/],
      ['an unknown command', ['delete', 'op_x'], 2, /Unknown command "delete"/],
      ['rotate without a client id', ['rotate'], 2, /Give one client id/],
      ['rotate of an unknown client', ['rotate', 'op_doesnotexist'], 1, /^There is no client op_doesnotexist\.\n$/],
      ['revoke of an unknown client', ['revoke', 'op_doesnotexist'], 1, /^There is no client op_doesnotexist\.\n$/],
    ])('refuses %s on standard error, with a non-zero exit and nothing written', async (_case, args, status, message) => {
      const rows = () => t.dataSource.query('SELECT * FROM operator_clients ORDER BY client_id');
      const before = await rows();
      const result = await clients(args);
      expect([result.status, result.stdout]).toEqual([status, '']);
      expect(result.stderr).toMatch(message);
      if (status === 2) expect(result.stderr).toContain('Usage:');
      expect(await rows()).toEqual(before);
    });

    it('refuses a configuration error by naming the variable', async () => {
      const result = await clients(['list'], { CLIENT_SECRET_GRACE: '1 day' });
      expect([result.status, result.stdout]).toEqual([1, '']);
      expect(result.stderr).toBe('Invalid configuration: CLIENT_SECRET_GRACE must be a whole number from 0 to 2592000\n');
    });
  });

  describe('the client credentials grant', () => {
    let crm: { client_id: string; client_secret: string; scope: string };

    beforeAll(async () => {
      crm = await created('leads:read leads:export leads:write');
    });

    /** The RFC 9068 access token of an operator client, as issued. */
    function expectOperatorToken(res: Response, clientId: string, scope: string): void {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, scope });
      expect(decodeProtectedHeader(res.body.access_token)).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
      const claims = decodeJwt(res.body.access_token);
      expect(claims).toEqual({
        iss: BASE,
        aud: BASE,
        sub: clientId,
        client_id: clientId,
        scope,
        kind: 'operator',
        jti: expect.any(String),
        iat: expect.any(Number),
        exp: claims.iat! + 900,
      });
    }

    it('issues an operator token to client_secret_basic, with all the client scopes by default', async () => {
      const res = await token({ grant_type: 'client_credentials' }, { Authorization: basic(crm.client_id, crm.client_secret) });
      expectOperatorToken(res, crm.client_id, 'leads:read leads:export leads:write');
    });

    it('issues an operator token to client_secret_post', async () => {
      const res = await token({ grant_type: 'client_credentials', client_id: crm.client_id, client_secret: crm.client_secret });
      expectOperatorToken(res, crm.client_id, 'leads:read leads:export leads:write');
    });

    it('form-decodes the Basic credentials (RFC 6749 §2.3.1), and takes the same client_id in the body beside them', async () => {
      const percent = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      const header = `Basic ${Buffer.from(`${percent(crm.client_id)}:${percent(crm.client_secret)}`).toString('base64')}`;
      expectOperatorToken(await token({ grant_type: 'client_credentials' }, { Authorization: header }), crm.client_id, crm.scope);
      const both = await token({ grant_type: 'client_credentials', client_id: crm.client_id }, { Authorization: basic(crm.client_id, crm.client_secret) });
      expectOperatorToken(both, crm.client_id, crm.scope);
    });

    it('grants a requested subset of the client scopes, each once, and refuses anything beyond with invalid_scope', async () => {
      const post = { grant_type: 'client_credentials', client_id: crm.client_id, client_secret: crm.client_secret };
      expectOperatorToken(await token({ ...post, scope: 'leads:export' }), crm.client_id, 'leads:export');
      expectOperatorToken(await token({ ...post, scope: 'leads:read  leads:read leads:write' }), crm.client_id, 'leads:read leads:write');
      for (const scope of ['leads:erase', 'leads:read webhooks:manage', 'admin', ' ']) {
        expectOAuthError(await token({ ...post, scope }), 'invalid_scope', /^Request a subset of: leads:read leads:export leads:write\.$/);
      }
    });

    it('answers every wrong credential with the same 401 invalid_client and the Basic challenge (RFC 6749 §5.2)', async () => {
      const revoked = await created('leads:read');
      expect((await clients(['revoke', revoked.client_id])).status).toBe(0);
      const grant = { grant_type: 'client_credentials' };
      const wrong: [string, Record<string, string>, Record<string, string>][] = [
        ['a wrong secret (Basic)', grant, { Authorization: basic(crm.client_id, `${crm.client_secret}x`) }],
        ['a wrong secret (post)', { ...grant, client_id: crm.client_id, client_secret: 'guess' }, {}],
        ['an unknown client', { ...grant, client_id: 'op_AAAAAAAAAAAAAAAAAAAAAA', client_secret: crm.client_secret }, {}],
        ['an overlong client id', { ...grant, client_id: `op_${'A'.repeat(100)}`, client_secret: crm.client_secret }, {}],
        // PostgreSQL errs on a NUL byte in a text parameter: such an id is never looked up.
        ['a client id with a NUL byte (post)', { ...grant, client_id: 'op_\u0000', client_secret: crm.client_secret }, {}],
        ['a client id with a NUL byte (Basic)', grant, { Authorization: basic('a\u0000', 'b') }],
        ['the secret of another client', grant, { Authorization: basic(crm.client_id, revoked.client_secret) }],
        ['a revoked client with its own secret', grant, { Authorization: basic(revoked.client_id, revoked.client_secret) }],
      ];
      const answers = [];
      for (const [name, form, headers] of wrong) {
        const res = await token(form, headers);
        answers.push(res.body);
        try {
          expectInvalidClient(res);
        } catch (error) {
          throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
        }
      }
      // Unknown, revoked and live clients cannot be told apart by the answer.
      expect(new Set(answers.map((body) => JSON.stringify({ ...body, request_id: undefined }))).size).toBe(1);
    });

    it.each<[string, Record<string, string>, string | undefined, RegExp]>([
      ['no client authentication', {}, undefined, /^No client authentication: send HTTP Basic/],
      ['a client_id alone', { client_id: 'op_AAAAAAAAAAAAAAAAAAAAAA' }, undefined, /^No client authentication/],
      ['a bearer token', {}, 'Bearer abc.def.ghi', /must be HTTP Basic/],
      ['Basic that is not base64', {}, 'Basic ***', /must be HTTP Basic/],
      ['Basic without a colon', {}, `Basic ${Buffer.from('op_AAAAAAAAAAAAAAAAAAAAAA').toString('base64')}`, /must be HTTP Basic/],
      ['Basic with a broken percent-encoding', {}, `Basic ${Buffer.from('op_A:%E0%A4%A').toString('base64')}`, /must be HTTP Basic/],
      ['Basic that is not UTF-8', {}, `Basic ${Buffer.from([0x6f, 0x70, 0x3a, 0xff, 0xfe]).toString('base64')}`, /must be HTTP Basic/],
    ])('answers %s with 401 invalid_client and the Basic challenge, saying what to send', async (_case, body, authorization, detail) => {
      const res = await token({ grant_type: 'client_credentials', ...body }, authorization ? { Authorization: authorization } : {});
      expect([res.status, res.body.error, res.body.code, res.headers['www-authenticate']]).toEqual([401, 'invalid_client', 'invalid_client', BASIC_CHALLENGE]);
      expect(res.body.detail).toMatch(detail);
    });

    it('sends invalid_client as application/json to a client that asks for it', async () => {
      const res = await token({ grant_type: 'client_credentials' }, { Authorization: basic(crm.client_id, 'wrong'), Accept: 'application/json' });
      expectInvalidClient(res, JSON_UTF8);
    });

    it.each<[string, Record<string, string> | string, boolean, RegExp]>([
      ['both methods at once', { grant_type: 'client_credentials', client_secret: 'x' }, true, /^Authenticate the client one way/],
      ['a body client_id other than the Basic one', { grant_type: 'client_credentials', client_id: 'op_other' }, true, /client_id in the body/],
      ['client_secret without client_id', { grant_type: 'client_credentials', client_secret: 'x' }, false, /client_id is required/],
      ['a repeated client_secret', 'grant_type=client_credentials&client_id=op_a&client_secret=a&client_secret=b', false, /client_secret/],
    ])('answers %s with 400 invalid_request (RFC 6749 §2.3.1, §5.2)', async (_case, form, withBasic, detail) => {
      expectOAuthError(await token(form, withBasic ? { Authorization: basic(crm.client_id, crm.client_secret) } : {}), 'invalid_request', detail);
    });

    it('refuses an unknown grant type, naming both supported ones', async () => {
      expectOAuthError(await token({ grant_type: 'password', username: 'a', password: 'b' }), 'unsupported_grant_type', /jwt-bearer, client_credentials/);
    });

    it('keeps the previous secret working for the grace period after clients:rotate, and stops it after', async () => {
      const issued = await created('leads:read');
      const before = await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, issued.client_secret) });
      expect(before.status).toBe(200);

      const rotated = await clients(['rotate', issued.client_id]);
      expect(rotated.status).toBe(0);
      expect(Object.keys(rotated.last!)).toEqual(['client_id', 'client_secret', 'scope']);
      expect(rotated.last).toEqual({ client_id: issued.client_id, client_secret: expect.stringMatching(/^[\w-]{43}$/), scope: 'leads:read' });
      expect(rotated.last!.client_secret).not.toBe(issued.client_secret);
      expect(rotated.stderr).toMatch(/the previous one keeps working until \d{4}-\d\d-\d\dT[\d:.]+Z \(CLIENT_SECRET_GRACE\)/);
      const row = await clientRow(issued.client_id);
      // 24 hours by default.
      expect(ageOf(row.previous_secret_expires_at) - ageOf(row.rotated_at)).toBe(86_400_000);

      // Within the grace period both secrets work; tokens issued before the rotation stay valid.
      for (const secret of [issued.client_secret, rotated.last!.client_secret]) {
        expect((await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, secret) })).status).toBe(200);
      }
      expect((await t.http.post('/api/v1/lead').set(bearer(before.body.access_token)).send(LEAD)).status).toBe(201);

      // The end of the grace period, as the database will see it tomorrow.
      await t.dataSource.getRepository(OperatorClient).update({ clientId: issued.client_id }, { previousSecretExpiresAt: new Date(Date.now() - 1000) });
      expectInvalidClient(await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, issued.client_secret) }));
      expect((await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, rotated.last!.client_secret) })).status).toBe(200);

      // CLIENT_SECRET_GRACE=0, for a leaked secret: the old one stops at once.
      const immediate = await clients(['rotate', issued.client_id], { CLIENT_SECRET_GRACE: '0' });
      expect(immediate.stderr).toContain('the previous one no longer works (CLIENT_SECRET_GRACE=0)');
      expectInvalidClient(await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, rotated.last!.client_secret) }));
      expect((await token({ grant_type: 'client_credentials' }, { Authorization: basic(issued.client_id, immediate.last!.client_secret) })).status).toBe(200);
      expect((await clients(['list'])).stdout).toContain(`"client_id":"${issued.client_id}","name":"CRM sync","scope":"leads:read","created_at"`);
    });

    it('stops the tokens of a client revoked by clients:revoke at once, and its secrets', async () => {
      const issued = await created('leads:write');
      const first = await token({ grant_type: 'client_credentials', client_id: issued.client_id, client_secret: issued.client_secret });
      const second = await token({ grant_type: 'client_credentials', client_id: issued.client_id, client_secret: issued.client_secret });
      expect((await t.http.post('/api/v1/lead').set(bearer(first.body.access_token)).send(LEAD).then(expectContract)).status).toBe(201);

      const revoked = await clients(['revoke', issued.client_id]);
      expect([revoked.status, revoked.stdout]).toEqual([0, '']);
      expect(revoked.stderr).toContain(`Revoked client ${issued.client_id}`);
      for (const res of [first, second]) {
        const refused = await t.http.post('/api/v1/lead').set(bearer(res.body.access_token)).send(LEAD).then(expectContract);
        expect([refused.status, refused.body.code]).toEqual([401, 'invalid_token']);
        expect(refused.headers['www-authenticate']).toBe(`Bearer error="invalid_token", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`);
      }
      expectInvalidClient(await token({ grant_type: 'client_credentials', client_id: issued.client_id, client_secret: issued.client_secret }));
      const again = await clients(['revoke', issued.client_id]);
      expect([again.status, again.stderr]).toEqual([0, expect.stringContaining('was already revoked on')]);
      expect((await clients(['rotate', issued.client_id])).stderr).toMatch(/was revoked on .*; create a new one/);
      expect((await clients(['list'])).stdout).toMatch(new RegExp(`"client_id":"${issued.client_id}".*"revoked_at":"\\d{4}-`));
    });

    it('revokes one operator access token at /oauth2/revoke (RFC 7009), leaving the client and its other tokens', async () => {
      const operator = await newOperator(t, 'leads:write');
      const other = await token({ grant_type: 'client_credentials', client_id: operator.client_id, client_secret: operator.client_secret });
      const res = await t.http.post('/oauth2/revoke').type('form').send({ token: operator.token }).then(expectContract);
      expect(res.status).toBe(200);
      expect((await t.http.get('/test-caller').set(bearer(operator.token))).status).toBe(401);
      expect((await t.http.get('/test-caller').set(bearer(other.body.access_token))).status).toBe(200);
    });
  });

  describe('operator tokens on the API', () => {
    it('count against the operator tier, one budget per client, and make the caller the client (Caller.clientId)', async () => {
      const operator = await newOperator(t, 'leads:write');
      const second = await token({ grant_type: 'client_credentials', client_id: operator.client_id, client_secret: operator.client_secret });
      const q = GENEROUS_LIMITS.RATE_LIMIT_OPERATOR.split('/')[0];

      const lead = await t.http.post('/api/v1/lead').set(bearer(operator.token)).send(LEAD).then(expectContract);
      expect(lead.status).toBe(201);
      expect(lead.headers['ratelimit-policy']).toBe(`"operator";q=${q};w=60`);
      expect(lead.headers.ratelimit).toMatch(new RegExp(`^"operator";r=${Number(q) - 1};t=\\d+$`));
      // Another token of the same client spends the same budget.
      const info = await t.http.get('/api/v1/info').set(bearer(second.body.access_token)).then(expectContract);
      expect(info.headers.ratelimit).toMatch(new RegExp(`^"operator";r=${Number(q) - 2};t=\\d+$`));
      // An operator's lead is no agent's.
      const [row] = await t.dataSource.query(sql('SELECT registration_id FROM leads WHERE id = $1'), [lead.body.id]);
      expect(row.registration_id).toBeNull();

      const caller = await t.http.get('/test-caller').set(bearer(operator.token));
      expect(caller.body).toEqual({ scope: `operator:${operator.client_id}`, registrationId: null, clientId: operator.client_id });
      const anonymous = await t.http.get('/test-caller');
      expect(anonymous.body).toMatchObject({ registrationId: null, clientId: null });
      expect(anonymous.headers['ratelimit-policy']).toMatch(/^"anonymous";/);
    });

    it('accepts an operator token without leads:write on the lead route, like any token on an optional-bearer route (decision 0021)', async () => {
      const reader = await newOperator(t, 'leads:read');
      const res = await t.http.post('/api/v1/lead').set(bearer(reader.token)).send(LEAD).then(expectContract);
      expect(res.status).toBe(201);
      expect(res.headers['ratelimit-policy']).toMatch(/^"operator";/);
    });

    it('never gives an agent an operator scope: a registration is granted agent scopes only, whatever its row says', async () => {
      const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' }).then(expectContract);
      const id = registration.body.registration_id;
      await t.dataSource.query(sql('UPDATE agent_registrations SET scopes = $1 WHERE id = $2'), ['leads:write leads:read leads:export', id]);
      const assertion = registration.body.identity_assertion;
      const granted = await token({ grant_type: JWT_BEARER, assertion });
      expect([granted.status, granted.body.scope, decodeJwt(granted.body.access_token).scope]).toEqual([200, 'leads:write', 'leads:write']);
      expectOAuthError(await token({ grant_type: JWT_BEARER, assertion, scope: 'leads:read' }), 'invalid_scope', /^Request a subset of: leads:write\.$/);
    });
  });

  describe('discovery', () => {
    it('lists the grants, the three client authentication methods and every scope', async () => {
      const res = await t.http.get('/.well-known/oauth-authorization-server').then(expectContract);
      expect(res.body).toMatchObject({
        grant_types_supported: [JWT_BEARER, 'client_credentials', 'urn:workos:agent-auth:grant-type:claim'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        scopes_supported: ['leads:write', 'leads:read', 'leads:export', 'webhooks:manage', 'leads:erase', 'leads:screen', 'notifications:manage'],
      });
      const resource = await t.http.get('/.well-known/oauth-protected-resource').then(expectContract);
      expect(resource.body.scopes_supported).toEqual(res.body.scopes_supported);
    });
  });

  describe('Swagger UI', () => {
    it('offers the client credentials flow of operatorAuth, whose token URL is this origin, and keeps no secret', async () => {
      const contract = await t.http.get('/docs/openapi-leads.json');
      const scheme = contract.body.components.securitySchemes.operatorAuth;
      expect(scheme).toMatchObject({ type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth2/token' } } });
      expect(Object.keys(scheme.flows.clientCredentials.scopes)).toEqual([
        'leads:read',
        'leads:export',
        'leads:write',
        'webhooks:manage',
        'leads:erase',
        'leads:screen',
        'notifications:manage',
      ]);
      // Swagger UI resolves tokenUrl against the selected server, which is relative: the origin that served the page.
      expect(contract.body.servers).toEqual([expect.objectContaining({ url: '/' })]);
      const init = await t.http.get('/docs/assets/swagger-init.js');
      expect(init.text).toContain('persistAuthorization: false');
    });

    it("answers Swagger UI's own token request: Basic over the raw id and secret, scope empty when none is ticked", async () => {
      const crm = await created('leads:read leads:export');
      // What swagger-ui's authorizeApplication sends (btoa(client_id + ':' + client_secret), scope = ticked.join(' ')).
      const headers = {
        Authorization: `Basic ${Buffer.from(`${crm.client_id}:${crm.client_secret}`).toString('base64')}`,
        Accept: 'application/json, text/plain, */*',
        'X-Requested-With': 'XMLHttpRequest',
      };
      const none = await token('grant_type=client_credentials&scope=', headers);
      expect([none.status, none.body.scope, none.headers['content-type']]).toEqual([200, 'leads:read leads:export', JSON_UTF8]);
      const ticked = await token('grant_type=client_credentials&scope=leads%3Aexport', headers);
      expect([ticked.status, ticked.body.scope]).toEqual([200, 'leads:export']);
      // Its error path reads `error` from JSON.
      const wrong = await token('grant_type=client_credentials&scope=', { ...headers, Authorization: basic(crm.client_id, 'wrong') });
      expectInvalidClient(wrong, JSON_UTF8);
    });
  });

  describe('stock clients, unmodified, over HTTP', () => {
    let issuer: URL;
    let crm: { client_id: string; client_secret: string };

    beforeAll(async () => {
      issuer = new URL(BASE);
      crm = await created('leads:read leads:write');
    });

    it('oauth4webapi: discovery, then clientCredentialsGrantRequest with ClientSecretBasic and ClientSecretPost', async () => {
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }));
      const oauthClient: oauth.Client = { client_id: crm.client_id };
      for (const auth of [oauth.ClientSecretBasic(crm.client_secret), oauth.ClientSecretPost(crm.client_secret)]) {
        const response = await oauth.clientCredentialsGrantRequest(as, oauthClient, auth, new URLSearchParams({ scope: 'leads:read' }), INSECURE);
        const tokens = await oauth.processClientCredentialsResponse(as, oauthClient, response);
        expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'leads:read' });
        // A resource server's own validation (RFC 9068 §4) accepts it, against the published keys.
        const claims = await oauth.validateJwtAccessToken(
          as,
          new Request(`${BASE}/api/v1/info`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
          BASE,
          INSECURE,
        );
        expect(claims).toMatchObject({ sub: crm.client_id, client_id: crm.client_id, scope: 'leads:read', kind: 'operator' });
        expect((await t.http.get('/test-caller').set(bearer(tokens.access_token))).body.clientId).toBe(crm.client_id);
      }
      // A wrong secret: the client reads the Basic challenge of the 401.
      const refused = await oauth
        .clientCredentialsGrantRequest(as, oauthClient, oauth.ClientSecretBasic('wrong'), new URLSearchParams(), INSECURE)
        .then((response) => oauth.processClientCredentialsResponse(as, oauthClient, response))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const challenge = refused as oauth.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause).toEqual([{ scheme: 'basic', parameters: { realm: 'Leads API', charset: 'UTF-8' } }]);
    });

    it('openid-client: discovery from the issuer, then clientCredentialsGrant with its default (post) and with ClientSecretBasic', async () => {
      for (const [algorithm, auth] of [
        ['oauth2', undefined],
        ['oidc', client.ClientSecretBasic(crm.client_secret)],
      ] as const) {
        const config = await client.discovery(issuer, crm.client_id, crm.client_secret, auth, { algorithm, execute: [client.allowInsecureRequests] });
        const granted = await client.clientCredentialsGrant(config, { scope: 'leads:write' });
        expect(granted).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'leads:write' });
        expect(decodeJwt(granted.access_token)).toMatchObject({ sub: crm.client_id, kind: 'operator', scope: 'leads:write' });
        const all = await client.clientCredentialsGrant(config);
        expect(all.scope).toBe('leads:read leads:write');
        await expect(client.clientCredentialsGrant(config, { scope: 'leads:erase' })).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
      }
      const wrong = await client.discovery(issuer, crm.client_id, 'wrong', undefined, { execute: [client.allowInsecureRequests] });
      await expect(client.clientCredentialsGrant(wrong)).rejects.toMatchObject({ status: 401 });
    });
  });
});

describe('operator clients: failed client authentication is charged to the token quota', () => {
  it('counts each failed attempt, then refuses even the right secret with 429 until the window resets', async () => {
    const t = await startTestApp({ RATE_LIMIT_TOKEN: '3/60s' });
    try {
      const operator = await t.app.get(OperatorClients).create('quota', 'leads:read');
      const attempt = (secret: string) =>
        t.http
          .post('/oauth2/token')
          .type('form')
          .send({ grant_type: 'client_credentials', client_id: operator.client_id, client_secret: secret })
          .then(expectContract);
      for (const left of [2, 1, 0]) {
        const res = await attempt(`guess-${left}`);
        expect([res.status, res.body.code, res.headers.ratelimit]).toEqual([401, 'invalid_client', expect.stringMatching(`^"token";r=${left};t=\\d+$`)]);
      }
      const limited = await attempt(operator.client_secret);
      expect([limited.status, limited.body.code, limited.headers['retry-after']]).toEqual([429, 'rate_limited', expect.stringMatching(/^\d+$/)]);
    } finally {
      await t.close();
    }
  });
});
