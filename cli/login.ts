// The operator login (`leads login`): an OAuth client's access token by the client-credentials grant (RFC 6749 §4.4,
// client_secret_basic), kept in the credentials file, renewed only from a secret the user made available.
import { CredentialStore, StoredLogin } from './credentials.js';
import { CliError, EXIT, Http, HttpResponse, RequestOptions, StreamedResponse, asProblem, describeFailure, failure } from './http.js';

/** Renew a token this long before it expires. */
const MARGIN_MS = 60_000;

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined and base64-encoded. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
export const basicAuthorization = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64')}`;

export class OperatorLogin {
  private renewing?: Promise<StoredLogin>;
  /** The stored login, read once per run (imports send many requests); undefined until read. */
  private cached?: { login?: StoredLogin };
  /** A login from LEADS_CLIENT_ID and LEADS_CLIENT_SECRET lives for this run only. */
  private ephemeral?: StoredLogin;

  constructor(
    private readonly http: Http,
    readonly store: CredentialStore,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (line: string) => void,
  ) {}

  private get stored(): StoredLogin | undefined {
    this.cached ??= { login: this.store.getLogin(this.http.baseUrl) };
    return this.cached.login;
  }

  /** Keeps the login in the credentials file (mode 0600). */
  save(login: StoredLogin): void {
    this.store.saveLogin(this.http.baseUrl, login);
    this.cached = { login };
  }

  /** Gets a token by the client-credentials grant with client_secret_basic: the check that id and secret are right. */
  async login(clientId: string, secret: string, options: { saveSecret: boolean; scope?: string }): Promise<StoredLogin> {
    const form: Record<string, string> = { grant_type: 'client_credentials' };
    if (options.scope !== undefined) form.scope = options.scope;
    const response = await this.http.request('/oauth2/token', { form, headers: { Authorization: basicAuthorization(clientId, secret) } });
    if (response.status !== 200) {
      const code = response.status >= 500 ? EXIT.server : response.status === 400 ? EXIT.invalid : EXIT.auth;
      throw new CliError(describeFailure(response), code, response);
    }
    const token = response.body as { access_token: string; expires_in: number; scope?: string };
    return {
      client_id: clientId,
      scope: token.scope ?? options.scope ?? '',
      ...(options.saveSecret ? { client_secret: secret } : {}),
      access_token: token.access_token,
      access_token_expires: new Date(Date.now() + token.expires_in * 1000).toISOString(),
    };
  }

  /** The login in force: LEADS_CLIENT_ID (with LEADS_CLIENT_SECRET) wins over the stored one; undefined when there is none. */
  current(): StoredLogin | undefined {
    const fromEnv = this.env.LEADS_CLIENT_ID;
    if (fromEnv) {
      if (!this.env.LEADS_CLIENT_SECRET) throw new CliError('error: LEADS_CLIENT_ID is set without LEADS_CLIENT_SECRET', EXIT.usage);
      return this.ephemeral ?? { client_id: fromEnv, scope: '', access_token: '', access_token_expires: new Date(0).toISOString() };
    }
    return this.stored;
  }

  /** A current access token; renews it from the saved secret or LEADS_CLIENT_SECRET, or says how to log in again. */
  async bearer(refused?: string): Promise<string> {
    const login = this.current();
    if (!login) throw notLoggedIn();
    if (login.access_token && login.access_token !== refused && Date.parse(login.access_token_expires) - MARGIN_MS > Date.now()) return login.access_token;
    this.renewing ??= this.renew(login).finally(() => (this.renewing = undefined));
    return (await this.renewing).access_token;
  }

  private async renew(login: StoredLogin): Promise<StoredLogin> {
    const secret = this.env.LEADS_CLIENT_SECRET || login.client_secret;
    if (!secret) {
      throw new CliError(
        `error: the operator login of ${login.client_id} has expired; run \`leads login --client-id ${login.client_id}\` again ` +
          '(--save-secret keeps the secret to renew it), or set LEADS_CLIENT_SECRET',
        EXIT.auth,
      );
    }
    this.log(`getting a new access token for ${login.client_id}`);
    // The same scopes as before (none asked: all of the client's).
    const renewed = await this.login(login.client_id, secret, { saveSecret: login.client_secret !== undefined, scope: login.scope || undefined });
    if (this.env.LEADS_CLIENT_ID) this.ephemeral = renewed;
    else this.save(renewed);
    return renewed;
  }

  /** Fails unless the login's token carries `scope`; before any row of an import is read. */
  async requireScope(scope: string): Promise<void> {
    await this.bearer();
    const login = this.current()!;
    if (!login.scope.split(' ').includes(scope)) {
      throw new CliError(
        `error: the operator login ${login.client_id} has the scopes "${login.scope}", not ${scope}; log in with a client that has it, or \`leads logout\``,
        EXIT.auth,
      );
    }
  }

  /** A request with the operator token; a 401 gets one new token and one retry. */
  async request(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return (await this.send(path, options, false)) as HttpResponse;
  }

  /** Like request, with a 2xx answer's body streamed (Http.open). */
  async open(path: string, options: RequestOptions = {}): Promise<HttpResponse | StreamedResponse> {
    return this.send(path, options, true);
  }

  private async send(path: string, options: RequestOptions, stream: boolean): Promise<HttpResponse | StreamedResponse> {
    const call = (token: string) => {
      const withToken = { ...options, headers: { ...options.headers, Authorization: `Bearer ${token}` } };
      return stream ? this.http.open(path, withToken) : this.http.request(path, withToken);
    };
    const token = await this.bearer();
    const response = await call(token);
    if (response.status !== 401) return response;
    this.log('access token refused (401): getting a new one once');
    return call(await this.bearer(token));
  }

  /** Forgets the stored login; its access token stays valid until it expires. */
  logout(): StoredLogin | undefined {
    const login = this.stored;
    if (login) this.store.removeLogin(this.http.baseUrl);
    this.cached = {};
    return login;
  }
}

export function notLoggedIn(): CliError {
  return new CliError(
    'error: no operator login for this service; run `leads login --client-id <id>` first (or set LEADS_CLIENT_ID and LEADS_CLIENT_SECRET)',
    EXIT.auth,
  );
}

/**
 * Throws for any non-2xx answer; a 403 insufficient_scope says which scope the operator's client lacks (`what` the
 * command could not do: "manage webhooks").
 */
export function ensureScope(response: HttpResponse, operator: OperatorLogin, scope: string, what: string): HttpResponse {
  if (response.status >= 200 && response.status < 300) return response;
  if (response.status === 403 && asProblem(response)?.code === 'insufficient_scope') {
    const clientId = operator.current()?.client_id ?? '<id>';
    throw new CliError(
      `${describeFailure(response)}\nthe operator login ${clientId} cannot ${what}: log in with a client that has the ${scope} scope ` +
        "(`leads login --client-id <id>`; the service's operator makes one with `npm run clients:create`)",
      EXIT.auth,
      response,
    );
  }
  throw failure(response);
}

/** The client secret from LEADS_CLIENT_SECRET, else standard input: typed without echo on a terminal, else its first line. */
export async function readSecret(env: NodeJS.ProcessEnv): Promise<string> {
  if (env.LEADS_CLIENT_SECRET) return env.LEADS_CLIENT_SECRET;
  const stdin = process.stdin;
  if (stdin.isTTY) return promptHidden('Client secret: ');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0].trim();
}

function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed after it is never displayed.
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: CliError) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value.trim());
    };
    const onData = (typed: string) => {
      for (const c of typed) {
        if (c === '\r' || c === '\n' || c === '\u0004') return finish();
        if (c === '\u0003') return finish(new CliError('error: cancelled', EXIT.usage));
        if (c === '\u007f' || c === '\b') value = Array.from(value).slice(0, -1).join('');
        else value += c;
      }
    };
    stdin.on('data', onData);
  });
}
