import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { decodeProtectedHeader, errors, JWTPayload, jwtVerify, JWTVerifyOptions, SignJWT } from 'jose';
import { IsNull, LessThan, ObjectLiteral, Repository } from 'typeorm';
import { bearerChallenge } from '../auth/bearer-challenge.js';
import { ANONYMOUS, Principal } from '../auth/principal.js';
import { AGENT_SCOPES, OPERATOR_SCOPES } from '../auth/scopes.js';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { AgentRefreshToken, REFRESH_TOKEN_PREFIX, refreshTokenHash } from '../identity/agent-refresh-token.entity.js';
import { AgentRegistration } from '../identity/agent-registration.entity.js';
import { AppError } from '../problem/app-error.js';
import { invalidClient, presentedCredentials } from './client-authentication.js';
import { CLOCK_SKEW_SECONDS, KEY_ALGORITHMS, KeyStore, TOKEN_LIFETIMES } from './key-store.service.js';
import { KeyPurpose } from './signing-key.entity.js';
import { OperatorClient } from './operator-client.entity.js';
import { OperatorClients } from './operator-clients.service.js';
import { RevokedToken } from './revoked-token.entity.js';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const CLIENT_CREDENTIALS_GRANT = 'client_credentials';
const ASSERTION_TYP = 'oauth-id-jag+jwt';
const ACCESS_TOKEN_TYP = 'at+jwt';
/** Tokens are parsed only below this size (RFC 8725 advice: bound the work before any crypto). */
const MAX_TOKEN_LENGTH = 8192;
const B64TOKEN = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
/** How many verified access tokens are remembered (about 1 KB each); the oldest goes first. */
const VERIFIED_CACHE_SIZE = 10_000;
/** Signed tokens found revoked (or of an unknown registration), remembered so that a flood of one costs one query. */
const REFUSED_CACHE_SIZE = 10_000;
const REFUSED_CACHE_MS = 10_000;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

interface VerifiedAccessToken {
  payload: JWTPayload;
  kid: unknown;
  scopes: readonly string[];
}

/** A grant type's handler: the form parameters and the Authorization header values, if any. */
export type Grant = (params: Record<string, string>, authorization: string[] | undefined) => Promise<TokenResponse>;

/** Thrown inside key resolution so that an unknown kid is a verification failure like any other. */
class UnknownKey extends errors.JOSEError {}

/**
 * Identity assertions (service-signed, ES256, `oauth-id-jag+jwt`) and RFC 9068 access tokens (RS256, `at+jwt`),
 * each with its own keys, type and checks, so that neither is ever accepted as the other.
 */
@Injectable()
export class TokenService implements OnModuleInit, OnModuleDestroy {
  private readonly issuer: string;
  private purgeTimer?: NodeJS.Timeout;
  private readonly tokenEndpoint: string;
  private readonly challenge: string;
  /** Access tokens already verified, by their exact text: a hit skips the signature check, never the liveness check. */
  private readonly verifiedAccessTokens = new Map<string, VerifiedAccessToken>();
  /** Access tokens whose liveness check failed, by their exact text, until when: refused again without a query. */
  private readonly refusedAccessTokens = new Map<string, number>();
  private readonly liveAgentSql: string;
  private readonly liveOperatorSql: string;
  /** The grant types of the token endpoint, by `grant_type`. */
  private readonly grants = new Map<string, Grant>([
    [JWT_BEARER_GRANT, (params) => this.jwtBearerGrant(params)],
    [CLIENT_CREDENTIALS_GRANT, (params, authorization) => this.clientCredentialsGrant(params, authorization)],
  ]);

  constructor(
    private readonly keys: KeyStore,
    @InjectRepository(AgentRegistration) private readonly registrations: Repository<AgentRegistration>,
    @InjectRepository(RevokedToken) private readonly revoked: Repository<RevokedToken>,
    @InjectRepository(AgentRefreshToken) private readonly refreshTokens: Repository<AgentRefreshToken>,
    @InjectRepository(OperatorClient) operatorClientRows: Repository<OperatorClient>,
    private readonly operatorClients: OperatorClients,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.issuer = config.publicBaseUrl;
    this.tokenEndpoint = `${config.publicBaseUrl}/oauth2/token`;
    this.challenge = bearerChallenge(config.publicBaseUrl, { error: 'invalid_token' });
    this.liveAgentSql = liveTokenSql(registrations, 'id', 'registeredFrom', revoked, 'claimedAt');
    this.liveOperatorSql = liveTokenSql(operatorClientRows, 'clientId', 'clientId', revoked);
  }

  /** Revoked access tokens need remembering only until they would have expired anyway, clock skew included. */
  onModuleInit(): void {
    this.purgeTimer ??= setInterval(
      () => void this.revoked.delete({ expiresAt: LessThan(new Date(Date.now() - CLOCK_SKEW_SECONDS * 1000)) }).catch(() => undefined),
      3_600_000,
    ).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  /** The registration's identity assertion: its address verified once its owner claimed it, self-reported before. */
  async signAssertion(registration: AgentRegistration): Promise<{ assertion: string; expiresAt: Date }> {
    const claims: JWTPayload = { registration_type: registration.type };
    if (registration.claimedAt !== null && registration.verifiedEmail) Object.assign(claims, { email: registration.verifiedEmail, email_verified: true });
    else if (registration.email) Object.assign(claims, { email: registration.email, email_verified: false });
    return this.sign('assertion', ASSERTION_TYP, claims, registration.id, this.issuer);
  }

  /** Adds a grant type to the token endpoint (a module whose grant needs what OAuth cannot import: the claim's). */
  registerGrant(type: string, grant: Grant): void {
    this.grants.set(type, grant);
  }

  /** The grant types the token endpoint takes (discovery lists them). */
  grantTypes(): string[] {
    return [...this.grants.keys()];
  }

  /** An access token for a registration, as the JWT-bearer grant gives one; a claimed registration's carries `claimed`. */
  agentAccessToken(registration: AgentRegistration, requestedScope?: string): Promise<TokenResponse> {
    // Agent scopes only, whatever a registration row says: an agent token never carries an operator scope.
    const scope = grantedScope(requestedScope, registration.scopes.split(' '), AGENT_SCOPES);
    return this.accessToken(registration.id, { client_id: registration.id, scope, ...(registration.claimedAt !== null ? { claimed: true } : {}) });
  }

  /** The token endpoint: the grant named by `grant_type`, given the request's Authorization header values. */
  async exchange(params: Record<string, string>, authorization?: string[]): Promise<TokenResponse> {
    if (!params.grant_type) throw new AppError('invalid_request', 'grant_type is required.');
    const grant = this.grants.get(params.grant_type);
    if (!grant) throw new AppError('unsupported_grant_type', `Supported grant types: ${[...this.grants.keys()].join(', ')}.`);
    return grant(params, authorization);
  }

  /**
   * The JWT-bearer grant (RFC 7523), for agents: every check, one generic answer for any failure
   * (docs/decisions/0008-token-exchange-and-access-tokens.md). No client authentication (`none`).
   */
  private async jwtBearerGrant(params: Record<string, string>): Promise<TokenResponse> {
    if (!params.assertion) throw new AppError('invalid_request', 'assertion is required.');
    const payload = await this.verify('assertion', params.assertion, {
      typ: ASSERTION_TYP,
      audience: [this.issuer, this.tokenEndpoint],
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
    });
    const registration = payload && (await this.activeRegistration(payload.sub));
    if (!registration) throw new AppError('invalid_grant', 'The assertion is not valid for this service.');
    // An assertion signed before its registration was claimed speaks for the unclaimed party: refused like its tokens.
    if (registration.claimedAt !== null && payload.email_verified !== true) throw new AppError('invalid_grant', 'The assertion is not valid for this service.');
    return this.agentAccessToken(registration, params.scope);
  }

  /**
   * The client credentials grant (RFC 6749 §4.4), for operator clients: `client_secret_basic` or `client_secret_post`;
   * the token's subject and `client_id` are the client, `kind: "operator"` marks it
   * (docs/decisions/0021-operator-clients-and-client-credentials.md).
   */
  private async clientCredentialsGrant(params: Record<string, string>, authorization: string[] | undefined): Promise<TokenResponse> {
    const { clientId, secret } = presentedCredentials(params, authorization);
    const client = await this.operatorClients.authenticate(clientId, secret);
    if (!client) throw invalidClient();
    const scope = grantedScope(params.scope, client.scopes.split(' '), OPERATOR_SCOPES);
    return this.accessToken(client.clientId, { client_id: client.clientId, scope, kind: 'operator' });
  }

  private async accessToken(subject: string, claims: JWTPayload & { scope: string }): Promise<TokenResponse> {
    const { assertion: accessToken } = await this.sign('access_token', ACCESS_TOKEN_TYP, claims, subject, this.issuer);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: TOKEN_LIFETIMES.access_token, scope: claims.scope };
  }

  /**
   * RFC 7009: an access token is revoked by its jti until it expires; an identity assertion or an agent's refresh token
   * (spent or not, while unexpired) revokes its whole registration (its assertions, its refresh tokens and every
   * access token, as RFC 7009 §2.1 advises for a refresh token). Unknown or invalid tokens get the same empty 200.
   */
  async revoke(params: Record<string, string>): Promise<void> {
    // token_type_hint is ignored: every kind is always tried, which RFC 7009 §2.1 requires of an unhelpful hint.
    if (!params.token) throw new AppError('invalid_request', 'token is required.');
    // Refresh tokens are opaque, told apart by their prefix: no signature to check, one lookup by hash.
    if (params.token.startsWith(REFRESH_TOKEN_PREFIX)) {
      const row = await this.refreshTokens.findOneBy({ tokenHash: refreshTokenHash(params.token) });
      if (row && row.expiresAt.getTime() > Date.now()) {
        await this.registrations.update({ id: row.registrationId, revokedAt: IsNull() }, { revokedAt: new Date() });
      }
      return;
    }
    // Expired tokens are not worth revoking, so ordinary verification (exp included) decides what is ours.
    const access = await this.verify('access_token', params.token, { typ: ACCESS_TOKEN_TYP, audience: this.issuer });
    if (access?.jti && access.exp) {
      await this.revoked.insert({ jti: access.jti, expiresAt: new Date(access.exp * 1000) }).catch((error: unknown) => {
        if (!isUniqueViolation(error)) throw error;
      });
      return;
    }
    const assertion = await this.verify('assertion', params.token, { typ: ASSERTION_TYP, audience: [this.issuer, this.tokenEndpoint] });
    if (assertion?.sub) await this.registrations.update({ id: assertion.sub, revokedAt: IsNull() }, { revokedAt: new Date() });
  }

  /**
   * The Authorization header of an API request: absent → anonymous; anything present must be a valid, live token.
   * `beforeLookup` runs before a token this instance has not verified yet is checked, so the caller can refuse first.
   * A token with `kind: "operator"` speaks for the operator client it names, any other for the agent registration it
   * names; either is live while its client or registration is and its jti is not revoked. Its principal has the
   * token's scopes, only those of its kind.
   */
  async authenticate(authorization: string[] | undefined, beforeLookup?: () => void): Promise<Principal> {
    if (!authorization) return ANONYMOUS;
    const match = authorization.length === 1 ? B64TOKEN.exec(authorization[0]) : null;
    if (!match) throw this.invalidToken('The Authorization header must be one "Bearer <access token>".');
    const token = match[1];
    const refusedUntil = this.refusedAccessTokens.get(token);
    if (refusedUntil !== undefined && refusedUntil > Date.now()) throw this.revokedToken();
    if (!this.verifiedAccessTokens.has(token)) beforeLookup?.();
    const verified = await this.verifiedAccessToken(token);
    if (!verified) throw this.invalidToken('The access token is malformed, expired or not issued by this service.');
    const { payload, scopes } = verified;
    // Checked on every request, one query each, so a revocation (of the token, the client or the registration) holds at
    // once on every instance.
    if (payload.kind === 'operator') {
      const [live] = (await this.registrations.manager.query(this.liveOperatorSql, [payload.sub, payload.jti])) as unknown[];
      if (!live) throw this.refuse(token);
      return { kind: 'operator', clientId: payload.sub!, scopes };
    }
    // The same query says where the registration came from, for its address's ceiling.
    const [live] = (await this.registrations.manager.query(this.liveAgentSql, [payload.sub, payload.jti])) as { live: string | null; claimed: unknown }[];
    if (!live) throw this.refuse(token);
    // A claim ends the tokens issued before it: they spoke for an unknown party (docs/decisions/0041-agent-claims.md).
    const claimed = live.claimed !== null && live.claimed !== undefined;
    if (claimed && payload.claimed !== true) throw this.refuse(token);
    return { kind: 'agent', registrationId: payload.sub!, registeredFrom: live.live ?? null, claimed, scopes };
  }

  /** Remembers a signed token found revoked, for REFUSED_CACHE_MS. */
  private refuse(token: string): AppError {
    this.refusedAccessTokens.delete(token);
    if (this.refusedAccessTokens.size >= REFUSED_CACHE_SIZE) this.refusedAccessTokens.delete(this.refusedAccessTokens.keys().next().value!);
    this.refusedAccessTokens.set(token, Date.now() + REFUSED_CACHE_MS);
    return this.revokedToken();
  }

  /**
   * An agent sends the same token for up to its lifetime; the signature is checked the first time only. A hit still
   * needs its key: a key deleted after a leak stops its tokens here within the key store's reload interval.
   */
  private async verifiedAccessToken(token: string): Promise<VerifiedAccessToken | undefined> {
    const known = this.verifiedAccessTokens.get(token);
    if (known && known.payload.exp! + CLOCK_SKEW_SECONDS > Date.now() / 1000 && (await this.keys.verificationKey('access_token', known.kid))) {
      return known;
    }
    this.verifiedAccessTokens.delete(token);
    const payload = await this.verify('access_token', token, {
      typ: ACCESS_TOKEN_TYP,
      audience: this.issuer,
      requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id'],
    });
    if (!payload) return undefined;
    if (this.verifiedAccessTokens.size >= VERIFIED_CACHE_SIZE) this.verifiedAccessTokens.delete(this.verifiedAccessTokens.keys().next().value!);
    // Scope is a set of space-separated names (RFC 6749 §3.3), split once per token rather than per request.
    const ofItsKind = payload.kind === 'operator' ? OPERATOR_SCOPES : AGENT_SCOPES;
    const scopes = Object.freeze(typeof payload.scope === 'string' ? payload.scope.split(' ').filter((scope) => ofItsKind.includes(scope)) : []);
    const verified = { payload, kid: decodeProtectedHeader(token).kid, scopes };
    this.verifiedAccessTokens.set(token, verified);
    return verified;
  }

  private revokedToken(): AppError {
    return this.invalidToken('The access token has been revoked.');
  }

  private invalidToken(detail: string): AppError {
    return new AppError('invalid_token', detail, { headers: { 'WWW-Authenticate': this.challenge } });
  }

  private async activeRegistration(id: string | undefined): Promise<AgentRegistration | null> {
    if (!id) return null;
    return this.registrations.findOneBy({ id, revokedAt: IsNull() });
  }

  private async sign(purpose: KeyPurpose, typ: string, claims: JWTPayload, subject: string, audience: string) {
    const { kid, alg, key } = await this.keys.signingKey(purpose);
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + TOKEN_LIFETIMES[purpose];
    const assertion = await new SignJWT(claims)
      .setProtectedHeader({ alg, typ, kid })
      .setIssuer(this.issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(key);
    return { assertion, expiresAt: new Date(expiresAt * 1000) };
  }

  /** Verified claims, or undefined when the token is not a valid token of this purpose. Database errors propagate. */
  private async verify(purpose: KeyPurpose, token: string, options: JWTVerifyOptions): Promise<JWTPayload | undefined> {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => (await this.keys.verificationKey(purpose, header.kid)) ?? Promise.reject(new UnknownKey('unknown key')),
        {
          // Every token of ours was issued within its lifetime, never in the future (jose checks iat both ways).
          maxTokenAge: TOKEN_LIFETIMES[purpose] + CLOCK_SKEW_SECONDS,
          ...options,
          issuer: this.issuer,
          algorithms: [KEY_ALGORITHMS[purpose]],
          clockTolerance: CLOCK_SKEW_SECONDS,
        },
      );
      // jose bounds iat, not exp: a token that claims to live longer than we ever issue (exp years ahead) is not ours.
      const withinLifetime = typeof payload.exp === 'number' && payload.exp - payload.iat! <= TOKEN_LIFETIMES[purpose];
      return typeof payload.sub === 'string' && payload.sub && withinLifetime ? payload : undefined;
    } catch (error) {
      if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined;
      throw error;
    }
  }
}

/**
 * Scope is a set (RFC 6749 §3.3): a name sent twice is granted once. No `scope` asks for everything granted; anything
 * outside what is granted (and of the token's kind) is `invalid_scope`.
 */
function grantedScope(requestedScope: string | undefined, stored: string[], ofItsKind: readonly string[]): string {
  const granted = stored.filter((scope) => ofItsKind.includes(scope));
  const requested = requestedScope ? [...new Set(requestedScope.split(' ').filter(Boolean))] : granted;
  if (!requested.length || requested.some((scope) => !granted.includes(scope))) {
    throw new AppError('invalid_scope', `Request a subset of: ${granted.join(' ')}.`);
  }
  return requested.join(' ');
}

/**
 * One round trip: a row (with one column, `live`) when the token's owner (registration or client) exists and is not
 * revoked, and the token's jti is not revoked. Written once per owner table, in the driver's SQL.
 */
function liveTokenSql<T extends ObjectLiteral>(
  owners: Repository<T>,
  idProperty: string,
  selected: string,
  revoked: Repository<RevokedToken>,
  claimed?: string,
): string {
  const driver = owners.manager.connection.driver;
  const column = (repository: Repository<T> | Repository<RevokedToken>, property: string) =>
    driver.escape(repository.metadata.findColumnWithPropertyName(property)!.databaseName);
  return (
    `SELECT ${column(owners, selected)} AS live${claimed ? `, ${column(owners, claimed)} AS claimed` : ''} FROM ${driver.escape(owners.metadata.tableName)} ` +
    `WHERE ${column(owners, idProperty)} = ${driver.createParameter('sub', 0)} AND ${column(owners, 'revokedAt')} IS NULL ` +
    `AND NOT EXISTS (SELECT 1 FROM ${driver.escape(revoked.metadata.tableName)} WHERE ${column(revoked, 'jti')} = ${driver.createParameter('jti', 1)})`
  );
}
