// Bearer tokens from the stored registration: reuse, renew from the assertion, refresh the assertion when it has expired
// (the same registration, so the same idempotency scope), register again only when the identity cannot be renewed.
import { CredentialStore, StoredRegistration } from './credentials.js';
import { CliError, EXIT, Http, HttpResponse, RequestOptions, describeFailure, ensureOk } from './http.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLAIM_GRANT = 'urn:workos:agent-auth:grant-type:claim';
/** Renew a token (or an assertion) this long before it expires. */
const MARGIN_MS = 60_000;

export interface IdentityResponse {
  registration_id: string;
  registration_type: 'anonymous' | 'identity_assertion' | 'service_auth';
  identity_assertion: string;
  assertion_expires: string;
  refresh_token?: string;
  refresh_token_expires?: string;
  claim_token?: string;
  /** A service_auth registration's claim, started with it: what the owner types on the page. */
  claim_attempt?: ClaimAttempt;
  [key: string]: unknown;
}

export interface ClaimAttempt {
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

const fresh = (iso: string | undefined) => iso !== undefined && Date.parse(iso) - MARGIN_MS > Date.now();

/** The refresh members of an answer, to store (an answer from a service without refresh tokens has none). */
const refreshOf = (identity: IdentityResponse) =>
  identity.refresh_token ? { refresh_token: identity.refresh_token, refresh_token_expires: identity.refresh_token_expires } : {};

export class Session {
  /** The stored registration, read once per run (imports send many requests); undefined until read. */
  private cached?: { registration?: StoredRegistration };
  /** One renewal at a time: concurrent requests that find the token stale share it. */
  private renewing?: Promise<StoredRegistration>;

  constructor(
    private readonly http: Http,
    readonly store: CredentialStore,
    private readonly log: (line: string) => void,
  ) {}

  get registration(): StoredRegistration | undefined {
    this.cached ??= { registration: this.store.get(this.http.baseUrl) };
    return this.cached.registration;
  }

  private remember(registration: StoredRegistration | undefined): void {
    if (registration) this.store.save(this.http.baseUrl, registration);
    else this.store.remove(this.http.baseUrl);
    this.cached = { registration };
  }

  /** POST /api/v1/agent/identity; returns the raw answer and stores the registration. */
  async register(input: { email?: string; name?: string; claim?: string }): Promise<{ identity: IdentityResponse; response: HttpResponse }> {
    const body: Record<string, unknown> = input.claim
      ? { type: 'service_auth', login_hint: input.claim }
      : input.email
        ? { type: 'identity_assertion', assertion_type: 'verified_email', assertion: input.email }
        : { type: 'anonymous' };
    if (input.name !== undefined) body.client_name = input.name;
    const response = await this.http.request('/api/v1/agent/identity', { json: body });
    if (response.status < 200 || response.status >= 300) {
      // A refused registration is an auth failure unless the input itself was wrong.
      const code = [400, 413, 415, 422].includes(response.status) ? EXIT.invalid : response.status >= 500 ? EXIT.server : EXIT.auth;
      throw new CliError(describeFailure(response), code, response);
    }
    const identity = response.body as IdentityResponse;
    this.remember({
      registration_id: identity.registration_id,
      registration_type: identity.registration_type,
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.name !== undefined ? { client_name: input.name } : {}),
      identity_assertion: identity.identity_assertion,
      assertion_expires: identity.assertion_expires,
      ...refreshOf(identity),
      ...(identity.claim_token ? { claim_token: identity.claim_token } : {}),
    });
    return { identity, response };
  }

  /**
   * Polls the token endpoint with the claim grant until the owner confirms on the page (then the claimed identity's
   * assertion and token are stored, and the earlier token, which the service now refuses, is dropped), or the attempt
   * ends. `authorization_pending` waits the interval; `slow_down` adds 5 s to it (RFC 8628 §3.5).
   */
  async awaitClaim(claimToken: string, attempt: ClaimAttempt): Promise<{ identity_assertion: string; assertion_expires: string }> {
    let interval = attempt.interval;
    const deadline = Date.now() + attempt.expires_in * 1000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, interval * 1000));
      const response = await this.http.request('/oauth2/token', {
        form: { grant_type: CLAIM_GRANT, claim_token: claimToken },
        headers: { Accept: 'application/json' },
      });
      const body = response.body as TokenResponse & { error?: string; identity_assertion: string; assertion_expires: string };
      if (response.status === 200) {
        const issued = { access_token: body.access_token, access_token_expires: new Date(Date.now() + body.expires_in * 1000).toISOString() };
        await this.store.withLock(async () => {
          const onFile = this.store.get(this.http.baseUrl);
          if (onFile) this.remember({ ...onFile, identity_assertion: body.identity_assertion, assertion_expires: body.assertion_expires, ...issued });
        });
        return body;
      }
      if (body?.error === 'slow_down') interval += 5;
      else if (body?.error !== 'authorization_pending' || Date.now() > deadline + interval * 1000) {
        const code = response.status >= 500 ? EXIT.server : EXIT.auth;
        throw new CliError(
          `${describeFailure(response)}
the claim was not confirmed; run \`leads register --claim <email>\` again for a new code`,
          code,
          response,
        );
      }
    }
  }

  /**
   * A fresh assertion for the stored registration. Under the credentials file's lock, so that of several commands
   * run at once one refreshes and the others read what it stored: a refresh token is spent by its use, and a spent
   * one sent again (after the service's short grace period) revokes the registration.
   */
  private async refreshAssertion(stored: StoredRegistration): Promise<StoredRegistration> {
    return this.store.withLock(async () => {
      const current = this.store.get(this.http.baseUrl);
      if (current?.registration_id === stored.registration_id && fresh(current.assertion_expires)) {
        this.cached = { registration: current };
        return current;
      }
      const latest = current?.registration_id === stored.registration_id ? current : stored;
      if (latest.refresh_token && fresh(latest.refresh_token_expires)) {
        this.log('identity assertion expired: refreshing it (same registration)');
        const response = await this.http.request('/api/v1/agent/identity', { json: { type: 'refresh', refresh_token: latest.refresh_token } });
        if (response.status === 200) {
          const identity = response.body as IdentityResponse;
          const { access_token: _token, access_token_expires: _expires, ...kept } = latest;
          const refreshed: StoredRegistration = {
            ...kept,
            identity_assertion: identity.identity_assertion,
            assertion_expires: identity.assertion_expires,
            ...refreshOf(identity),
          };
          this.remember(refreshed);
          return refreshed;
        }
        if (response.status !== 400) throw new CliError(describeFailure(response), response.status >= 500 ? EXIT.server : EXIT.auth, response);
        process.stderr.write(
          `warning: ${describeFailure(response)}\nthe identity ${latest.registration_id} cannot be renewed; registering a new one: this client is now a new caller, so rows imported before may be stored again\n`,
        );
      } else {
        process.stderr.write(
          `warning: the identity ${latest.registration_id} has no usable refresh token; registering a new one: this client is now a new caller, so rows imported before may be stored again\n`,
        );
      }
      await this.register({ email: latest.email, name: latest.client_name });
      return this.registration!;
    });
  }

  /** A current access token, or undefined without a registration (anonymous). */
  async bearer(forceRenew = false): Promise<string | undefined> {
    const stored = this.registration;
    if (!stored) return undefined;
    if (!forceRenew && stored.access_token && fresh(stored.access_token_expires)) return stored.access_token;
    this.renewing ??= this.renew(stored).finally(() => (this.renewing = undefined));
    return (await this.renewing).access_token!;
  }

  /**
   * Exchanges the assertion for a new access token; refreshes the assertion first if it has expired (registering again,
   * same type, name and e-mail, only when the identity cannot be renewed).
   */
  async renew(stored: StoredRegistration): Promise<StoredRegistration> {
    let current = stored;
    if (!fresh(current.assertion_expires)) current = await this.refreshAssertion(current);
    this.log('renewing the access token from the stored assertion');
    const response = await this.http.request('/oauth2/token', { form: { grant_type: JWT_BEARER, assertion: current.identity_assertion } });
    if (response.status !== 200) {
      const code = response.status >= 500 ? EXIT.server : EXIT.auth;
      throw new CliError(
        `${describeFailure(response)}\nthe stored registration ${current.registration_id} was refused; run \`leads logout\` then \`leads register\``,
        code,
        response,
      );
    }
    const token = response.body as TokenResponse;
    const issued = { access_token: token.access_token, access_token_expires: new Date(Date.now() + token.expires_in * 1000).toISOString() };
    // Merged into what the file holds now, under its lock: another command may have refreshed meanwhile, and writing
    // back the refresh token read before would bring a spent one back.
    return this.store.withLock(async () => {
      const onFile = this.store.get(this.http.baseUrl);
      if (onFile?.registration_id !== current.registration_id) {
        // Logged out or replaced meanwhile: this run finishes with its token, and stores nothing back.
        this.cached = { registration: { ...current, ...issued } };
        return this.cached.registration!;
      }
      const updated: StoredRegistration = { ...onFile, ...issued };
      this.remember(updated);
      return updated;
    });
  }

  /**
   * A request with the stored token (if any). A 401 triggers exactly one renewal and one retry; a second 401 is
   * returned to the caller, never retried again.
   */
  async request(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const token = await this.bearer();
    const withToken = (t: string | undefined): RequestOptions => (t ? { ...options, headers: { ...options.headers, Authorization: `Bearer ${t}` } } : options);
    const response = await this.http.request(path, withToken(token));
    if (response.status !== 401 || !token) return response;
    this.log('access token refused (401): renewing once');
    // A concurrent request may have renewed it already.
    const current = this.registration?.access_token;
    const renewed = current && current !== token ? current : await this.bearer(true);
    return this.http.request(path, withToken(renewed));
  }

  /**
   * Revokes the registration and forgets it: by its refresh token (RFC 7009, which also ends its refresh family), or by
   * its assertion when it has no refresh token.
   */
  async logout(): Promise<{ registration?: StoredRegistration; response?: HttpResponse }> {
    const stored = this.registration;
    if (!stored) return {};
    const form = stored.refresh_token
      ? { token: stored.refresh_token, token_type_hint: 'refresh_token' }
      : { token: stored.identity_assertion, token_type_hint: 'identity_assertion' };
    const response = ensureOk(await this.store.withLock(() => this.http.request('/oauth2/revoke', { form })));
    this.remember(undefined);
    return { registration: stored, response };
  }
}
