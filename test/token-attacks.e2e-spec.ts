import { createPrivateKey, createPublicKey, randomUUID, sign as cryptoSign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CompactEncrypt,
  type CryptoKey,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  importX509,
  type JWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import type { Response } from 'supertest';
import { KeyStore } from '../src/oauth/key-store.service.js';
import { SigningKey } from '../src/oauth/signing-key.entity.js';
import { SecretBox } from '../src/secrets/secret-box.js';
import { contractSchema, expectContract } from './support/contract.js';
import { rawRequest as rawRequestTo } from './support/raw-http.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

/**
 * Attacks on JWTs (RFC 8725, RFC 7523 §3, RFC 9068), grouped into classes #1–#16 in the table below, against the real
 * app on both sides where they apply: as the `assertion` of the JWT-bearer grant (400 invalid_grant with one generic
 * description, docs/decisions/0008-token-exchange-and-access-tokens.md) and as the bearer token of POST /api/v1/lead
 * (401 invalid_token with the challenge of docs/decisions/0009-bearer-tokens-are-optional-never-ignored.md, nothing
 * stored).
 * Genuine material comes from the service itself; "our key" below means the private JWK read from signing_keys, so that
 * a token can be correct in every respect but the one under test. Controls prove that such tokens are otherwise accepted.
 */

const ISSUER = 'http://leads.test';
const TOKEN_ENDPOINT = `${ISSUER}/oauth2/token`;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CHALLENGE = `Bearer error="invalid_token", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`;
const LEAD = { nome: 'Ana Souza', email: 'ana@exemplo.com.br' };
/** Library, parser, driver or input text that must never reach a client: it would tell an attacker which check failed. */
const LEAKS =
  /ERR_JOSE|JWS|JWTClaim|JWTExpired|signature|"(exp|nbf|iat|aud|iss|sub|jti|kid|alg|typ|crit)"|claim|etc\/passwd|OR 1=1|SQLITE_|QueryFailedError|syntax error|node_modules|\n\s+at /i;
const HOUR = 3600;

type Purpose = 'assertion' | 'access_token';

/**
 * One kind of JWT and where it is presented; lifetimes: assertions 1 h, access tokens 900 s
 * (docs/decisions/0007-agent-registration.md, 0008-token-exchange-and-access-tokens.md).
 */
interface Side {
  name: string;
  purpose: Purpose;
  other: Purpose;
  typ: string;
  alg: 'ES256' | 'RS256';
  lifetime: number;
}

const ASSERTION: Side = {
  name: 'assertion at POST /oauth2/token',
  purpose: 'assertion',
  other: 'access_token',
  typ: 'oauth-id-jag+jwt',
  alg: 'ES256',
  lifetime: HOUR,
};
const ACCESS: Side = { name: 'bearer token at POST /api/v1/lead', purpose: 'access_token', other: 'assertion', typ: 'at+jwt', alg: 'RS256', lifetime: 900 };
const SIDES = [ASSERTION, ACCESS];

interface RealKey {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
  key: CryptoKey;
}

interface AttackerKey {
  kid: string;
  key: CryptoKey;
  privateJwk: JWK;
  publicJwk: JWK;
  /** A self-signed X.509 certificate for the key, base64 DER as in `x5c`. */
  cert: string;
}

interface Agent {
  id: string;
  assertion: string;
  accessToken: string;
}

const now = () => Math.floor(Date.now() / 1000);
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
let ipCounter = 0;
/** A new client address per request (TRUST_PROXY=1), so that per-IP rate limits never decide an answer here. */
const freshIp = () => {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
};

// ---- the app and the material --------------------------------------------------------------------------------------

let t: TestApp;
let keys: Record<Purpose, RealKey>;
let served: Record<Purpose, JWK>;
let attacker: Record<Purpose, AttackerKey>;
let agent: Agent;
let otherAgent: Agent;
let genericGrantDescription: string;
/** A local server standing in for the attacker's jku/x5u host; every request it gets is recorded. */
let lure: HttpServer;
let lureUrl: string;
const lureHits: string[] = [];

async function registerAgent(app: TestApp = t): Promise<Agent> {
  const res = await app.http
    .post('/api/v1/agent/identity')
    .set('X-Forwarded-For', freshIp())
    .send({ type: 'anonymous', client_name: 'token-attacks' })
    .then(expectContract);
  expect(res.status).toBe(200);
  const exchanged = await exchange(res.body.identity_assertion, app);
  expect(exchanged.status).toBe(200);
  return { id: res.body.registration_id, assertion: res.body.identity_assertion, accessToken: exchanged.body.access_token };
}

function exchange(assertion: string, app: TestApp = t): Promise<Response> {
  return app.http
    .post('/oauth2/token')
    .set('X-Forwarded-For', freshIp())
    .set('Accept', 'application/json')
    .type('form')
    .send({ grant_type: JWT_BEARER, assertion })
    .then(expectContract);
}

function submitLead(token: string, app: TestApp = t): Promise<Response> {
  return app.http.post('/api/v1/lead').set('X-Forwarded-For', freshIp()).set('Authorization', `Bearer ${token}`).send(LEAD).then(expectContract);
}

/** The side's answer for a token it must refuse, with every member its record in docs/decisions/ (0006, 0009) promises. */
async function refuse(side: Side, token: string, app: TestApp = t): Promise<Response> {
  if (side.purpose === 'assertion') {
    const res = await exchange(token, app);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      error_description: genericGrantDescription,
      type: `${ISSUER}/docs/errors#invalid_grant`,
      title: 'Invalid grant',
      status: 400,
      code: 'invalid_grant',
      detail: genericGrantDescription,
      instance: '/oauth2/token',
      request_id: res.headers['x-request-id'],
    });
    expect(typeof res.body.hint).toBe('string');
    expect(res.body.access_token).toBeUndefined();
    expect(res.text).not.toMatch(LEAKS);
    return res;
  }
  const before = await countLeads(app.dataSource);
  const res = await submitLead(token, app);
  expect([res.status, res.body.code]).toEqual([401, 'invalid_token']);
  expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.body).toMatchObject({
    type: `${ISSUER}/docs/errors#invalid_token`,
    status: 401,
    instance: '/api/v1/lead',
    request_id: res.headers['x-request-id'],
  });
  expect(res.text).not.toMatch(LEAKS);
  expect(await countLeads(app.dataSource)).toBe(before);
  return res;
}

async function accept(side: Side, token: string, app: TestApp = t): Promise<Response> {
  if (side.purpose === 'assertion') {
    const res = await exchange(token, app);
    expect([res.status, res.body.error]).toEqual([200, undefined]);
    expect(res.body.token_type).toBe('Bearer');
    return res;
  }
  const before = await countLeads(app.dataSource);
  const res = await submitLead(token, app);
  expect([res.status, res.body.code]).toEqual([201, undefined]);
  expect(await countLeads(app.dataSource)).toBe(before + 1);
  return res;
}

/** Claims that the side accepts for `sub`, with fresh jti/iat/exp. */
function claims(side: Side, sub: string = agent.id): JWTPayload {
  const iat = now();
  const base = { iss: ISSUER, aud: ISSUER, sub, jti: randomUUID(), iat, exp: iat + side.lifetime };
  return side.purpose === 'assertion' ? { ...base, registration_type: 'anonymous' } : { ...base, client_id: sub, scope: 'leads:write' };
}

const header = (side: Side, extra: Record<string, unknown> = {}) => ({ alg: side.alg, typ: side.typ, kid: keys[side.purpose].kid, ...extra });

/** Signs with jose; `undefined` members of the overrides drop the claim or header parameter. */
function signWith(key: CryptoKey | Uint8Array, protectedHeader: Record<string, unknown>, payload: JWTPayload): Promise<string> {
  const clean = <T extends object>(o: T) => JSON.parse(JSON.stringify(o)) as T;
  return new SignJWT(clean(payload)).setProtectedHeader(clean(protectedHeader) as { alg: string }).sign(key);
}

/** Signed with the service's real key: correct in every respect except the overrides. */
const real = (side: Side, claimOverrides: Record<string, unknown> = {}, headerOverrides: Record<string, unknown> = {}) =>
  signWith(keys[side.purpose].key, header(side, headerOverrides), { ...claims(side), ...claimOverrides });

/** Signed by the attacker's own key of the side's algorithm. */
const forged = (side: Side, headerOverrides: Record<string, unknown>, claimOverrides: Record<string, unknown> = {}) =>
  signWith(attacker[side.purpose].key, { alg: side.alg, typ: side.typ, ...headerOverrides }, { ...claims(side), ...claimOverrides });

/** A compact JWS assembled by hand (node:crypto), for what jose refuses to produce: unknown crit, b64:false, duplicate names. */
function rawSigned(privateJwk: JWK, alg: string, headerText: string, payloadText: string): string {
  const input = `${b64(headerText)}.${b64(payloadText)}`;
  const key: KeyObject = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
  const signature = alg.startsWith('ES')
    ? cryptoSign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
    : cryptoSign('sha256', Buffer.from(input), key);
  return `${input}.${signature.toString('base64url')}`;
}

const rawReal = (side: Side, headerValue: Record<string, unknown> | string, payload: JWTPayload | string = claims(side)) =>
  rawSigned(
    keys[side.purpose].privateJwk,
    side.alg,
    typeof headerValue === 'string' ? headerValue : JSON.stringify(headerValue),
    typeof payload === 'string' ? payload : JSON.stringify(payload),
  );

const genuine = (side: Side) => (side.purpose === 'assertion' ? agent.assertion : agent.accessToken);
const signingInput = (token: string) => token.split('.').slice(0, 2).join('.');

/** A real token with its payload replaced and its original signature kept. */
function tampered(token: string, changes: Record<string, unknown>): string {
  const [h, , s] = token.split('.');
  return [h, b64(JSON.stringify({ ...decodeJwt(token), ...changes })), s].join('.');
}

/** A real token padded with a junk claim to about `length` characters. */
async function padded(side: Side, length: number): Promise<string> {
  let pad = Math.floor(length * 0.75);
  let token = await real(side, { pad: 'x'.repeat(pad) });
  pad += Math.floor((length - token.length) * 0.75);
  token = await real(side, { pad: 'x'.repeat(pad) });
  return token;
}

// ---- a minimal self-signed X.509 certificate, so that x5c carries a real certificate for the attacker's key ----------

function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

function selfSignedCertificate(privateKey: KeyObject, ec: boolean): string {
  const oid = (hex: string) => der(0x06, Buffer.from(hex, 'hex'));
  // ecdsa-with-SHA256 (1.2.840.10045.4.3.2) or sha256WithRSAEncryption (1.2.840.113549.1.1.11) with NULL parameters.
  const algorithm = ec ? der(0x30, oid('2a8648ce3d040302')) : der(0x30, oid('2a864886f70d01010b'), Buffer.from([0x05, 0x00]));
  const name = der(0x30, der(0x31, der(0x30, oid('550403'), der(0x0c, Buffer.from('attacker.example')))));
  const validity = der(0x30, der(0x17, Buffer.from('260101000000Z')), der(0x17, Buffer.from('491231235959Z')));
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const tbs = der(0x30, der(0xa0, der(0x02, Buffer.from([2]))), der(0x02, Buffer.from([1])), algorithm, name, validity, name, spki);
  const signature = cryptoSign('sha256', tbs, privateKey);
  return der(0x30, tbs, algorithm, der(0x03, Buffer.from([0]), signature)).toString('base64');
}

async function attackerKey(alg: 'ES256' | 'RS256'): Promise<AttackerKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const kid = `attacker-${alg.toLowerCase()}`;
  const privateJwk = await exportJWK(pair.privateKey);
  const cert = selfSignedCertificate(createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }), alg === 'ES256');
  // The certificate must be one a naive verifier could use: it parses and carries the attacker's public key.
  const fromCert = await exportJWK(await importX509(`-----BEGIN CERTIFICATE-----\n${cert}\n-----END CERTIFICATE-----`, alg));
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
  expect(fromCert.x ?? fromCert.n).toBe(publicJwk.x ?? publicJwk.n);
  return { kid, key: pair.privateKey, privateJwk, publicJwk, cert };
}

async function loadKeys(app: TestApp): Promise<Record<Purpose, RealKey>> {
  const rows = await app.dataSource.getRepository(SigningKey).find();
  const current = (purpose: Purpose) => rows.filter((r) => r.purpose === purpose && !r.retiredAt).sort((a, b) => +b.createdAt - +a.createdAt)[0];
  const load = async (purpose: Purpose): Promise<RealKey> => {
    const row = current(purpose);
    // Stored sealed (src/secrets/secret-box.ts): opened as the service opens it.
    const privateJwk = JSON.parse(app.app.get(SecretBox).open(row.privateJwk, `signing_key:${row.kid}`)) as JWK;
    return { kid: row.kid, alg: row.alg, privateJwk, publicJwk: JSON.parse(row.publicJwk) as JWK, key: (await importJWK(privateJwk, row.alg)) as CryptoKey };
  };
  return { assertion: await load('assertion'), access_token: await load('access_token') };
}

beforeAll(async () => {
  t = await startTestApp({ TRUST_PROXY: '1' });
  // Listening lets raw sockets reach the server (431 for an oversized Authorization header).
  await t.app.listen(0, '127.0.0.1');

  lure = createServer((req, res) => {
    lureHits.push(`${req.method} ${req.url}`);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ keys: [attacker.assertion.publicJwk, attacker.access_token.publicJwk] }));
  });
  await new Promise<void>((resolve) => lure.listen(0, '127.0.0.1', resolve));
  lureUrl = `http://127.0.0.1:${(lure.address() as AddressInfo).port}`;

  // The service makes its keys in the background as it starts; the first JWKS request waits for them.
  const jwks = await t.http.get('/.well-known/jwks.json').then(expectContract);
  keys = await loadKeys(t);
  expect([keys.assertion.alg, keys.access_token.alg]).toEqual(['ES256', 'RS256']);
  served = {
    assertion: jwks.body.keys.find((k: JWK) => k.kid === keys.assertion.kid),
    access_token: jwks.body.keys.find((k: JWK) => k.kid === keys.access_token.kid),
  };
  attacker = { assertion: await attackerKey('ES256'), access_token: await attackerKey('RS256') };

  agent = await registerAgent();
  otherAgent = await registerAgent();
  // The one description every assertion failure must share: whatever a plain non-JWT gets.
  const garbage = await exchange('not-a-jwt');
  expect(garbage.body.error).toBe('invalid_grant');
  genericGrantDescription = garbage.body.error_description;
});

afterAll(async () => {
  await new Promise((resolve) => lure.close(resolve));
  await t.close();
});

// ---- the table -----------------------------------------------------------------------------------------------------

type Build = (side: Side) => string | Promise<string>;
/** [attack class, case, token builder, only on this side]. */
type Row = [string, string, Build, Purpose?];

const zeroSignature = (side: Side) => Buffer.alloc(side.alg === 'ES256' ? 64 : 256).toString('base64url');
const publicPem = (side: Side) =>
  createPublicKey({ key: keys[side.purpose].publicJwk as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

const REFUSED: Row[] = [
  ['#1', 'alg "none" (jose UnsecuredJWT)', (s) => new UnsecuredJWT(claims(s)).encode()],
  [
    '#1',
    'alg "none" with our typ and kid and an empty signature',
    (s) => `${b64(JSON.stringify({ alg: 'none', typ: s.typ, kid: keys[s.purpose].kid }))}.${b64(JSON.stringify(claims(s)))}.`,
  ],
  [
    '#1',
    'alg "none" keeping a genuine signature',
    (s) => `${b64(JSON.stringify({ alg: 'none', typ: s.typ, kid: keys[s.purpose].kid }))}.${genuine(s).split('.').slice(1).join('.')}`,
  ],
  [
    '#1',
    'a duplicated alg in the header whose last value is "none" (our key signs)',
    (s) => rawReal(s, JSON.stringify(header(s)).replace(/}$/, ',"alg":"none"}')),
  ],
  [
    '#2',
    'HS256 keyed with our published JWK as the HMAC secret',
    (s) => signWith(new TextEncoder().encode(JSON.stringify(served[s.purpose])), header(s, { alg: 'HS256' }), claims(s)),
  ],
  [
    '#2',
    'HS256 keyed with our public key PEM as the HMAC secret',
    (s) => signWith(new TextEncoder().encode(publicPem(s)), header(s, { alg: 'HS256' }), claims(s)),
  ],
  ['#3', 'an attacker key embedded in header jwk', (s) => forged(s, { jwk: attacker[s.purpose].publicJwk })],
  ['#3', 'an attacker key in header jwk under our kid', (s) => forged(s, { kid: keys[s.purpose].kid, jwk: attacker[s.purpose].publicJwk })],
  [
    '#3',
    'jku pointing at the attacker JWKS (a local server that must never be called)',
    (s) => forged(s, { kid: attacker[s.purpose].kid, jku: `${lureUrl}/jwks.json` }),
  ],
  ['#3', 'jku pointing at the attacker JWKS, under our kid', (s) => forged(s, { kid: keys[s.purpose].kid, jku: `${lureUrl}/ours.json` })],
  ['#3', 'x5u pointing at the attacker certificate', (s) => forged(s, { x5u: `${lureUrl}/cert.pem` })],
  ['#3', 'x5c carrying the attacker self-signed certificate', (s) => forged(s, { x5c: [attacker[s.purpose].cert] })],
  ['#3', 'x5c carrying the attacker certificate, under our kid', (s) => forged(s, { kid: keys[s.purpose].kid, x5c: [attacker[s.purpose].cert] })],
  ['#4', 'a genuine token with its signature stripped (h.p.)', (s) => `${signingInput(genuine(s))}.`],
  ['#4', 'a genuine token cut to two parts (h.p)', (s) => signingInput(genuine(s))],
  ['#4', 'a genuine token with an all-zero signature ("psychic signature")', (s) => `${signingInput(genuine(s))}.${zeroSignature(s)}`],
  [
    '#5',
    'a genuine token with sub changed to another registration, original signature kept',
    (s) => tampered(genuine(s), { sub: otherAgent.id, client_id: otherAgent.id }),
  ],
  ['#5', 'a genuine token with exp extended by a day, original signature kept', (s) => tampered(genuine(s), { exp: now() + 86400 })],
  ['#6', 'aud another service', (s) => real(s, { aud: 'https://api.example.com' })],
  ['#6', 'aud the API root instead of the issuer', (s) => real(s, { aud: `${ISSUER}/api/v1` })],
  ['#6', 'aud the issuer with a trailing slash (exact comparison)', (s) => real(s, { aud: `${ISSUER}/` })],
  ['#6', 'aud missing', (s) => real(s, { aud: undefined })],
  ['#6', 'aud an array without us', (s) => real(s, { aud: ['https://a.example', 'https://b.example'] })],
  ['#6', 'aud the token endpoint (an audience for assertions only)', (s) => real(s, { aud: TOKEN_ENDPOINT }), 'access_token'],
  ['#7', 'iss another issuer', (s) => real(s, { iss: 'https://evil.example' })],
  ['#7', 'iss ours with a trailing slash (exact comparison)', (s) => real(s, { iss: `${ISSUER}/` })],
  ['#7', 'iss missing', (s) => real(s, { iss: undefined })],
  ['#7', 'sub missing', (s) => real(s, { sub: undefined })],
  ['#7', 'sub empty', (s) => real(s, { sub: '' })],
  ['#7', 'sub a number', (s) => real(s, { sub: 42 })],
  ['#7', 'sub an array holding the registration id', (s) => real(s, { sub: [agent.id] })],
  ['#7', 'sub a registration that does not exist', (s) => real(s, { sub: 'reg_nobody', client_id: 'reg_nobody' })],
  ['#8', 'exp 120 s in the past (beyond the 60 s skew)', (s) => real(s, { iat: now() - 600, exp: now() - 120 })],
  ['#8', 'exp missing', (s) => real(s, { exp: undefined })],
  ['#8', 'exp a string', (s) => real(s, { exp: String(now() + 300) })],
  ['#8', 'exp ten years ahead', (s) => real(s, { exp: now() + 10 * 365 * 86400 })],
  ['#8', 'exp one second beyond the lifetime after iat', (s) => real(s, { exp: now() + s.lifetime + 1 })],
  ['#8', 'nbf five minutes ahead', (s) => real(s, { nbf: now() + 300 })],
  ['#8', 'iat older than the maximum age, exp still ahead', (s) => real(s, { iat: now() - 2 * s.lifetime - 120, exp: now() + 300 })],
  ['#8', 'iat ten minutes in the future', (s) => real(s, { iat: now() + 600, exp: now() + 900 })],
  ['#8', 'iat missing', (s) => real(s, { iat: undefined })],
  ['#9', 'jti missing', (s) => real(s, { jti: undefined })],
  [
    '#10',
    'an unknown crit header parameter (our key signs)',
    (s) => rawReal(s, header(s, { crit: ['urn:example:must-understand'], 'urn:example:must-understand': true })),
  ],
  ['#10', 'b64:false, with a signature that is valid over the same bytes', (s) => rawReal(s, header(s, { b64: false, crit: ['b64'] }))],
  ['#10', 'a JWE encrypted to our own public key, wrapping a genuine token', (s) => encryptedToUs(s)],
  [
    '#10',
    'five parts where a JWS is expected',
    (s) => `${b64(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: keys[s.purpose].kid }))}..${b64('iv')}.${b64('ciphertext')}.${b64('tag')}`,
  ],
  [
    '#11',
    'the other kind of genuine token (access token as assertion; assertion as bearer)',
    (s) => (s.purpose === 'assertion' ? agent.accessToken : agent.assertion),
  ],
  [
    '#11',
    'our claims for this kind, signed by our key of the other kind under its kid',
    (s) => signWith(keys[s.other].key, header(s, { alg: keys[s.other].alg, kid: keys[s.other].kid }), claims(s)),
  ],
  ['#11', 'our key and claims, with the typ of the other kind', (s) => real(s, {}, { typ: s.purpose === 'assertion' ? 'at+jwt' : 'oauth-id-jag+jwt' })],
  ['#11', 'our key and claims, with typ "JWT"', (s) => real(s, {}, { typ: 'JWT' })],
  ['#11', 'our key and claims, with no typ', (s) => real(s, {}, { typ: undefined })],
  ['#12', 'an unknown kid (our key signs)', (s) => real(s, {}, { kid: `${keys[s.purpose].kid}x` })],
  ['#12', 'kid "../../etc/passwd" (our key signs)', (s) => real(s, {}, { kid: '../../etc/passwd' })],
  ['#12', `kid "' OR 1=1 --" (our key signs)`, (s) => real(s, {}, { kid: "' OR 1=1 --" })],
  ['#12', 'kid a number (our key signs)', (s) => real(s, {}, { kid: 1 })],
  ['#12', 'kid of 1,000 characters (our key signs)', (s) => real(s, {}, { kid: 'k'.repeat(1000) })],
  ['#12', 'no kid (our key signs)', (s) => real(s, {}, { kid: undefined })],
  ['#12', 'an attacker kid with an attacker key', (s) => forged(s, { kid: attacker[s.purpose].kid })],
  ['#13', 'a 9 KB token signed by our key (over the 8 KB parse bound)', (s) => padded(s, 9 * 1024), 'assertion'],
  ['#13', 'a 12 KB token signed by our key (over the 8 KB parse bound)', (s) => padded(s, 12 * 1024), 'access_token'],
  [
    '#13',
    'claims nested 5,000 levels deep, signed by our key (over the 8 KB bound)',
    (s) => rawReal(s, header(s), JSON.stringify(claims(s)).replace(/}$/, `,"deep":${nested(5000)}}`)),
  ],
  [
    '#13',
    'a header nested 2,500 levels deep, signed by an attacker',
    (s) => rawSigned(attacker[s.purpose].privateJwk, s.alg, JSON.stringify(header(s)).replace(/}$/, `,"deep":${nested(2500)}}`), JSON.stringify(claims(s))),
  ],
  [
    '#16',
    'RS256 under our assertion kid, signed by our own RSA key',
    (s) => signWith(keys.access_token.key, header(s, { alg: 'RS256' }), claims(s)),
    'assertion',
  ],
  [
    '#16',
    'RS256 under our assertion kid, signed by an attacker RSA key',
    (s) => signWith(attacker.access_token.key, header(s, { alg: 'RS256' }), claims(s)),
    'assertion',
  ],
  [
    '#16',
    'ES384 under our assertion kid, signed by an attacker P-384 key',
    async (s) => signWith((await generateKeyPair('ES384')).privateKey, header(s, { alg: 'ES384' }), claims(s)),
    'assertion',
  ],
  [
    '#16',
    'PS256 under our access-token kid: a valid RSA-PSS signature by the same key',
    async (s) => signWith((await importJWK(keys.access_token.privateJwk, 'PS256')) as CryptoKey, header(s, { alg: 'PS256' }), claims(s)),
    'access_token',
  ],
  [
    '#16',
    'ES256 under our access-token kid, signed by our own EC key',
    (s) => signWith(keys.assertion.key, header(s, { alg: 'ES256' }), claims(s)),
    'access_token',
  ],
];

async function encryptedToUs(side: Side): Promise<string> {
  const alg = side.purpose === 'assertion' ? 'ECDH-ES' : 'RSA-OAEP-256';
  const publicKey = await importJWK(keys[side.purpose].publicJwk, alg);
  return new CompactEncrypt(new TextEncoder().encode(genuine(side)))
    .setProtectedHeader({ alg, enc: 'A256GCM', cty: 'JWT', typ: side.typ, kid: keys[side.purpose].kid })
    .encrypt(publicKey);
}

/** Rows that must pass, so that each refusal above is caused by its one defect and not by the harness. */
const ACCEPTED: [string, Build, Purpose?][] = [
  ['the genuine token the service issued', (s) => genuine(s)],
  ['well-formed claims signed here with our key', (s) => real(s)],
  ['exp 30 s in the past (within the 60 s skew)', (s) => real(s, { iat: now() - 600, exp: now() - 30 })],
  ['nbf 30 s ahead (within the 60 s skew)', (s) => real(s, { nbf: now() + 30 })],
  ['exp exactly the lifetime after iat', (s) => real(s, { exp: now() + s.lifetime })],
  ['aud an array that includes us', (s) => real(s, { aud: ['https://other.example', ISSUER] })],
  ['typ with the application/ prefix (RFC 9068 §4)', (s) => real(s, {}, { typ: `application/${s.typ}` })],
  ['a token just under 8 KB', (s) => padded(s, 8000)],
  ['aud the token endpoint (RFC 7523 §3)', (s) => real(s, { aud: TOKEN_ENDPOINT }), 'assertion'],
];

const rowsFor = <R extends unknown[]>(rows: R[], purpose: Purpose, only: (row: R) => Purpose | undefined) =>
  rows.filter((row) => (only(row) ?? purpose) === purpose);

describe.each(SIDES)('the $name', (side) => {
  it.each(rowsFor(REFUSED, side.purpose, (r) => r[3]))('%s refuses %s', async (_row, _name, build) => {
    await refuse(side, await build(side));
    expect(lureHits).toEqual([]);
  });

  it.each(rowsFor(ACCEPTED, side.purpose, (r) => r[2]))('accepts (control) %s', async (_name, build) => {
    await accept(side, await build(side));
  });

  it('#14 reads a duplicated claim name as its last value (JSON.parse), never the first', async () => {
    const twice = (first: string, last: string) =>
      JSON.stringify(claims(side)).replace(`"sub":"${agent.id}"`, `"sub":${JSON.stringify(first)},"sub":${JSON.stringify(last)}`);
    const lastIsAgent = rawReal(side, header(side), twice('reg_nobody', agent.id));
    const ok = await accept(side, lastIsAgent);
    if (side.purpose === 'assertion') expect(decodeJwt(ok.body.access_token).sub).toBe(agent.id);
    await refuse(side, rawReal(side, header(side), twice(agent.id, 'reg_nobody')));
  });
});

describe('sizes (#13)', () => {
  it('answers 413 payload_too_large for a 1 MB assertion (the body limit is 16 KiB), before any token work', async () => {
    const res = await t.http
      .post('/oauth2/token')
      .set('X-Forwarded-For', freshIp())
      .set('Accept', 'application/json')
      .type('form')
      .send(`grant_type=${encodeURIComponent(JWT_BEARER)}&assertion=${'a'.repeat(1024 * 1024)}`)
      .then(expectContract);
    expect([res.status, res.body.code, res.body.error]).toEqual([413, 'payload_too_large', 'invalid_request']);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers 431 for a bearer token over the 16 KiB header limit, before the app; nothing stored', async () => {
    const before = await countLeads(t.dataSource);
    const token = await padded(ACCESS, 17 * 1024);
    const body = JSON.stringify(LEAD);
    const raw = await rawRequest(
      `POST /api/v1/lead HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nAuthorization: Bearer ${token}\r\n\r\n${body}`,
    );
    expect(raw.status).toBe(431);
    expect(raw.headers['content-type']).toMatch(/^application\/problem\+json(; charset=utf-8)?$/);
    // Node answers before routing, so expectContract cannot know the operation: the body is checked as a Problem directly.
    const problem = JSON.parse(raw.body);
    const validate = contractSchema('/components/schemas/Problem');
    expect(validate(problem) ? [] : validate.errors).toEqual([]);
    expect(problem).toMatchObject({ status: 431, code: 'request_header_fields_too_large' });
    expect(await countLeads(t.dataSource)).toBe(before);
  });
});

describe('revocation (#15)', () => {
  it('refuses everything of a revoked registration: its assertion, its access token, and fresh tokens our key signs for it', async () => {
    const victim = await registerAgent();
    const revoked = await t.http.post('/oauth2/revoke').set('X-Forwarded-For', freshIp()).type('form').send({ token: victim.assertion }).then(expectContract);
    expect(revoked.status).toBe(200);
    await refuse(ASSERTION, victim.assertion);
    await refuse(ASSERTION, await real(ASSERTION, { sub: victim.id }));
    await refuse(ACCESS, victim.accessToken);
    await refuse(ACCESS, await real(ACCESS, { sub: victim.id, client_id: victim.id }));
  });

  it('refuses a revoked access token while its registration keeps working', async () => {
    const holder = await registerAgent();
    const revoked = await t.http.post('/oauth2/revoke').set('X-Forwarded-For', freshIp()).type('form').send({ token: holder.accessToken }).then(expectContract);
    expect(revoked.status).toBe(200);
    await refuse(ACCESS, holder.accessToken);
    const renewed = await accept(ASSERTION, holder.assertion);
    await accept(ACCESS, renewed.body.access_token);
  });
});

const rawRequest = (request: string) => rawRequestTo(t.app.getHttpServer(), request);

describe('key rotation and removal (#15)', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(() => r.close());

  const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;
  const rowExists = async (kid: string) => (await r.dataSource.getRepository(SigningKey).countBy({ kid })) === 1;

  /** Runs `check` as if `seconds` had passed for the key store (its reload and retirement clocks); tokens keep their real times. */
  async function later<T>(seconds: number, check: () => Promise<T>): Promise<T> {
    const realNow = Date.now.bind(Date);
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + seconds * 1000);
    try {
      return await check();
    } finally {
      spy.mockRestore();
    }
  }

  it('keeps accepting tokens of the previous keys after a rotation, and signs new ones with the new keys', async () => {
    const before = await registerAgent(r);
    const created = await r.app.get(KeyStore).rotate();
    await accept(ASSERTION, before.assertion, r);
    await accept(ACCESS, before.accessToken, r);
    const after = await registerAgent(r);
    expect(created).toEqual(expect.arrayContaining([kidOf(after.assertion), kidOf(after.accessToken)]));
    expect(kidOf(after.assertion)).not.toBe(kidOf(before.assertion));
    await accept(ACCESS, after.accessToken, r);
  });

  it('refuses tokens of a key removed from the database, on an instance that only verifies, once it looks again (≤ 60 s)', async () => {
    const old = await registerAgent(r);
    await r.app.get(KeyStore).rotate();
    const fresh = await registerAgent(r);
    // Used once first, so that a verified-token cache would remember it.
    await accept(ACCESS, old.accessToken, r);
    await r.dataSource.getRepository(SigningKey).delete([kidOf(old.assertion), kidOf(old.accessToken)]);
    expect(await rowExists(kidOf(old.assertion))).toBe(false);
    await later(61, async () => {
      await refuse(ASSERTION, old.assertion, r);
      await refuse(ACCESS, old.accessToken, r);
      await accept(ACCESS, fresh.accessToken, r);
    });
  });

  it('refuses tokens of a retired key once every token it could have signed has expired (lifetime + 60 s skew)', async () => {
    const old = await registerAgent(r);
    await r.app.get(KeyStore).rotate();
    await accept(ASSERTION, old.assertion, r);
    await later(900 + 60 + 1, async () => {
      await refuse(ACCESS, old.accessToken, r);
      expect((await exchange(old.assertion, r)).status).toBe(200);
    });
    await later(HOUR + 60 + 1, () => refuse(ASSERTION, old.assertion, r));
    // A key that can verify nothing any more is deleted, private part included.
    expect(await rowExists(kidOf(old.assertion))).toBe(false);
  });
});
