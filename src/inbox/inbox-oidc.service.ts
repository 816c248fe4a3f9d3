import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { AppConfig, OidcConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { safeError } from '../logging/safe-error.js';
import { PeopleService } from '../people/people.service.js';
import type { Person } from '../people/person.js';
import { SecretBox } from '../secrets/secret-box.js';
import { InboxPages } from './inbox-pages.service.js';
import { INBOX_HOME, safeReturnPath } from './return-path.js';

export const OIDC_CALLBACK_PATH = '/inbox/oidc/callback';
const GOOGLE_ISSUER = 'https://accounts.google.com';

/** How long a browser has to come back from the provider. */
const ATTEMPT_SECONDS = 600;
/** A provider that cannot be discovered is asked again after this long, not on every sign-in. */
const DISCOVERY_RETRY_MS = 30_000;

const audit = new Logger('InboxAudit');

/** Why a sign-in through the provider is refused: each has its message on the sign-in page. */
export type OidcRefusal = 'oidc.failed' | 'oidc.unverified' | 'oidc.notAllowed' | 'oidc.unavailable';

/**
 * Sign-in to the inbox through an OpenID Provider (issue 38; docs/decisions/0043-inbox-single-sign-on.md): the
 * authorization code flow with PKCE, `state` and `nonce` (openid-client). Nothing is stored for an attempt: a random
 * seed in an HttpOnly cookie (`inbox_oidc`, 10 minutes) gives the PKCE verifier and the nonce by a keyed MAC, and the
 * `state` carries the return path with a MAC bound to the seed, so a callback from another browser, or with a `state`
 * changed on the way, is refused. Who may enter: a person of the inbox with that address, or anyone in an allowed
 * domain (added with the default role); the address must be verified unless the issuer is trusted for it.
 */
@Injectable()
export class InboxOidc {
  private readonly logger = new Logger('InboxOidc');
  readonly settings: OidcConfig | null;
  private readonly redirectUri: string;
  private discovered?: Promise<oidc.Configuration>;
  private discoveryFailedAt = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly pages: InboxPages,
    private readonly people: PeopleService,
    private readonly box: SecretBox,
  ) {
    this.settings = config.oidc;
    this.redirectUri = `${config.publicBaseUrl}${OIDC_CALLBACK_PATH}`;
  }

  /** Sends the browser to the provider, with a fresh attempt cookie. */
  async start(req: Request, res: Response): Promise<void> {
    const returnPath = safeReturnPath(req.query.return);
    const provider = await this.provider();
    if (!provider) return this.refuse(req, res, 'oidc.unavailable', returnPath, 503);
    const seed = randomBytes(32).toString('base64url');
    this.pages.sessions.cookies.set(res, 'inbox_oidc', seed, ATTEMPT_SECONDS);
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(this.derive(seed, 'verifier')),
      code_challenge_method: 'S256',
      state: this.state(seed, returnPath),
      nonce: this.derive(seed, 'nonce'),
    });
    this.pages.redirect(res, url.href);
  }

  /** The provider's answer: checks it, finds or adds the person, and starts a session; or the sign-in page says why not. */
  async callback(req: Request, res: Response): Promise<void> {
    const seed = this.pages.sessions.cookies.read(req, 'inbox_oidc');
    this.pages.sessions.cookies.clear(res, 'inbox_oidc');
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const returnPath = seed ? this.returnPathOf(seed, state) : undefined;
    if (!seed || returnPath === undefined) return this.refuse(req, res, 'oidc.failed', undefined, 400, 'state');
    const provider = await this.provider();
    if (!provider) return this.refuse(req, res, 'oidc.unavailable', returnPath, 503);
    let claims: { iss: string; sub: string; email?: unknown; email_verified?: unknown; hd?: unknown };
    try {
      const query = new URL(req.originalUrl, 'http://inbox.invalid').search;
      const tokens = await oidc.authorizationCodeGrant(provider, new URL(`${this.redirectUri}${query}`), {
        pkceCodeVerifier: this.derive(seed, 'verifier'),
        expectedState: state,
        expectedNonce: this.derive(seed, 'nonce'),
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      claims = { iss: idToken.iss, sub: idToken.sub, email: idToken.email, email_verified: idToken.email_verified, hd: idToken.hd };
      // Many providers put the address in userinfo only.
      if (typeof claims.email !== 'string') {
        const info = await oidc.fetchUserInfo(provider, tokens.access_token, idToken.sub);
        claims = { ...claims, email: info.email, email_verified: info.email_verified };
      }
    } catch (error) {
      this.logger.warn({ error: safeError(error), issuer: this.settings!.issuer }, 'inbox sign-in through the provider failed');
      return this.refuse(req, res, 'oidc.failed', returnPath, 400, 'exchange');
    }
    const settings = this.settings!;
    if (typeof claims.email !== 'string') return this.refuse(req, res, 'oidc.unverified', returnPath, 403, 'no_email');
    // A trusted issuer's address stands without the claim, never against an explicit false.
    const flag = claims.email_verified;
    const verified = flag === true || flag === 'true' || (settings.trustEmailIssuers.has(claims.iss) && flag !== false && flag !== 'false');
    if (!verified) return this.refuse(req, res, 'oidc.unverified', returnPath, 403, 'unverified');
    // Google verifies the address of any Google account, a personal one made with a company address too: only an
    // account of the company's Workspace (its `hd`, the address's own domain) speaks for that address.
    const domain = claims.email.slice(claims.email.lastIndexOf('@') + 1).toLowerCase();
    if (claims.iss === GOOGLE_ISSUER && (typeof claims.hd !== 'string' || claims.hd.toLowerCase() !== domain))
      return this.refuse(req, res, 'oidc.notAllowed', returnPath, 403, 'not_workspace');
    const person = await this.admitted(claims.email, domain);
    if (!person) return this.refuse(req, res, 'oidc.notAllowed', returnPath, 403, 'not_allowed');
    if (!(await this.people.bindProviderAccount(person.id, claims.iss, claims.sub)))
      return this.refuse(req, res, 'oidc.notAllowed', returnPath, 403, 'other_account');
    await this.pages.sessions.start(req, res, person.id);
    audit.log({ audit: 'inbox_sign_in', user_id: person.id, role: person.role, method: 'oidc' }, 'inbox sign-in');
    this.pages.redirect(res, returnPath);
  }

  /** The person with this address, or, in an allowed domain, one added now with the default role. */
  private async admitted(email: string, domain: string): Promise<Person | undefined> {
    const known = await this.people.byAddress(email);
    if (known) return known;
    if (!this.settings!.allowedDomains.has(domain)) return undefined;
    const added = await this.people.add(email, this.settings!.defaultRole, 'oidc');
    // Added meanwhile by another sign-in of the same person: theirs.
    return added.added ? added.person : this.people.byAddress(email);
  }

  private refuse(req: Request, res: Response, error: OidcRefusal, returnPath = INBOX_HOME, status: number, cause?: string): void {
    if (cause) audit.log({ audit: 'inbox_sign_in_refused', method: 'oidc', cause }, 'inbox sign-in refused');
    this.pages.render(req, res, 'sign-in', { returnPath, email: '', error, signedOut: false }, { title: 'signIn.title', status });
  }

  /** The provider's configuration, discovered once (again after a failure, at most every 30 s). */
  private async provider(): Promise<oidc.Configuration | undefined> {
    const settings = this.settings!;
    if (!this.discovered) {
      if (Date.now() - this.discoveryFailedAt < DISCOVERY_RETRY_MS) return undefined;
      const insecure = new URL(settings.issuer).protocol === 'http:';
      this.discovered = oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
        timeout: 10,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
    }
    try {
      return await this.discovered;
    } catch (error) {
      this.discovered = undefined;
      this.discoveryFailedAt = Date.now();
      this.logger.error({ error: safeError(error), issuer: settings.issuer }, 'the OpenID Provider could not be discovered');
      return undefined;
    }
  }

  /** A value of this attempt, from its seed and the service key: 43 characters of base64url, as PKCE wants. */
  private derive(seed: string, purpose: 'verifier' | 'nonce' | 'state'): string {
    return this.box.mac(seed, `inbox-oidc:${purpose}`).toString('base64url');
  }

  /**
   * `<return path, base64url>.<MAC of seed and path>`: the provider hands it back unchanged. The path alone, never its
   * query, which may hold a search for a lead's name or address and would sit in the provider's logs.
   */
  private state(seed: string, returnPath: string): string {
    const path = Buffer.from(returnPath.split('?')[0], 'utf8').toString('base64url');
    return `${path}.${this.derive(`${seed}\n${path}`, 'state')}`;
  }

  private returnPathOf(seed: string, state: string): string | undefined {
    const [path, mac, extra] = state.split('.');
    if (!path || !mac || extra !== undefined) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.box.mac(`${seed}\n${path}`, 'inbox-oidc:state');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return safeReturnPath(Buffer.from(path, 'base64url').toString('utf8'));
  }
}
