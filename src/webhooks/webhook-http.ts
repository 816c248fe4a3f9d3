import http from 'node:http';
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import tls from 'node:tls';
import { allowedScheme, checkAddress, literalAddress, systemResolver, type ResolvedAddress, type Resolver } from './webhook-address.js';

/** The part of an answer the attempt log keeps (decision 0027). */
export const RESPONSE_BODY_KEPT = 4096;
/** How much of an answer is read before the connection is dropped: a receiver cannot make an attempt read forever. */
export const RESPONSE_READ_LIMIT = 65_536;

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** For the whole attempt: name lookup, connection and answer. */
  timeoutMs: number;
}

export interface WebhookResponse {
  /** Null when no HTTP answer came. */
  status: number | null;
  /** What went wrong, as short text with no secrets ('timeout', 'connection_refused', 'tls_error: CERT_HAS_EXPIRED'). */
  error: string | null;
  retryAfterSeconds: number | null;
  /** The first 4 KiB of the answer, as UTF-8 (a character cut at the limit is left out). */
  body: string;
  /** The whole attempt, name lookup included. */
  latencyMs: number;
  /** The address connected to, or the last one tried when none answered; null when none was tried. */
  address: string | null;
}

/**
 * Opens a connection to an address that has been checked; it must return a socket that is still connecting. For https,
 * `servername` is the URL's host, so that the certificate is verified for the name the endpoint was registered with.
 */
export type Connector = (target: { address: string; family: 4 | 6; port: number; servername: string | null }) => net.Socket;

/** Plain TCP for http, TLS verified against the system's authorities (or `ca`, for tests) for https. */
export function socketConnector(options: { ca?: string } = {}): Connector {
  return ({ address, family, port, servername }) => {
    if (servername === null) return net.connect({ host: address, port, family });
    // SNI carries names only (RFC 6066); for a literal IP host the certificate is verified for the address itself.
    // Without the trailing dot of a fully qualified name, which SNI must not carry (RFC 6066 §3).
    const sni = net.isIP(servername) === 0 ? servername.replace(/\.$/, '') : undefined;
    return tls.connect({ host: address, port, servername: sni, ca: options.ca, ALPNProtocols: ['http/1.1'] });
  };
}

export const defaultConnector: Connector = socketConnector();

export interface WebhookHttpClientOptions {
  allowPrivate: boolean;
  resolver?: Resolver;
  connect?: Connector;
  userAgent: string;
}

/**
 * Sends one webhook attempt. The name is resolved once, its addresses are checked against the policy and the
 * connection is made to a checked address, so a name that answers differently the second time (DNS rebinding) has
 * nothing to rebind. Redirects are not followed. Network trouble is returned as `error`, never thrown.
 *
 * Each attempt opens its own connection (and TLS session), which keeps it free of stale-connection failures; reusing
 * connections per (address, port, server name) would save a handshake per delivery under load, once measured.
 */
export class WebhookHttpClient {
  private readonly allowPrivate: boolean;
  private readonly resolver: Resolver;
  private readonly connect: Connector;
  private readonly userAgent: string;

  constructor(options: WebhookHttpClientOptions) {
    this.allowPrivate = options.allowPrivate;
    this.resolver = options.resolver ?? systemResolver;
    this.connect = options.connect ?? defaultConnector;
    this.userAgent = options.userAgent;
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), request.timeoutMs);
    let address: string | null = null;
    const respond = (fields: Partial<WebhookResponse>): WebhookResponse => ({
      status: null,
      error: null,
      retryAfterSeconds: null,
      body: '',
      ...fields,
      latencyMs: Math.round(performance.now() - started),
      address,
    });
    try {
      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        return respond({ error: 'invalid_url' });
      }
      if (!allowedScheme(url.protocol, this.allowPrivate)) return respond({ error: 'scheme_not_allowed' });

      let candidates: ResolvedAddress[];
      try {
        candidates = await this.addressesOf(url.hostname, deadline.signal);
      } catch {
        return respond({ error: deadline.signal.aborted ? 'timeout' : 'dns_failure' });
      }
      if (candidates.length === 0) return respond({ error: 'dns_failure' });
      const allowed: ResolvedAddress[] = [];
      let refusal = '';
      for (const candidate of candidates) {
        const verdict = checkAddress(candidate.address, this.allowPrivate);
        if (verdict.allowed) allowed.push(candidate);
        else refusal ||= verdict.reason;
      }
      if (allowed.length === 0) return respond({ error: `address_not_allowed: ${refusal}` });

      const https = url.protocol === 'https:';
      const port = url.port === '' ? (https ? 443 : 80) : Number(url.port);
      const servername = https ? (literalAddress(url.hostname) ?? url.hostname) : null;
      let socket: net.Socket | undefined;
      let failure: unknown;
      // Nothing has been sent until a connection is up, so the next address can be tried safely.
      for (const candidate of allowed) {
        address = candidate.address;
        try {
          socket = await open(this.connect, { address: candidate.address, family: candidate.family, port, servername }, deadline.signal);
          break;
        } catch (error) {
          failure = error;
          if (deadline.signal.aborted) break;
        }
      }
      if (socket === undefined) return respond({ error: deadline.signal.aborted ? 'timeout' : describe(failure) });

      const headers = {
        ...request.headers,
        host: url.host,
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': this.userAgent,
      };
      try {
        return respond(await exchange(socket, `${url.pathname}${url.search}`, headers, request.body, deadline.signal));
      } catch (error) {
        return respond({ error: deadline.signal.aborted ? 'timeout' : describe(error) });
      } finally {
        // Already done after an answer; this is for a request that could not even be written (a bad header value).
        socket.destroy();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private addressesOf(hostname: string, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const literal = literalAddress(hostname);
    if (literal !== null) return Promise.resolve([{ address: literal, family: net.isIP(literal) === 6 ? 6 : 4 }]);
    // A lookup cannot be cancelled; past the deadline its answer is ignored.
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new TimedOut());
      signal.addEventListener('abort', onAbort, { once: true });
      this.resolver(hostname)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}

class TimedOut extends Error {}

/** A failure during the TLS handshake, named by its code ('CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID'). */
class TlsFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const ignore = () => {};

/** A connected socket (TLS established, for https), or the reason there is none. */
function open(connect: Connector, target: Parameters<Connector>[0], signal: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new TimedOut());
    let socket: net.Socket;
    try {
      socket = connect(target);
    } catch (error) {
      return reject(error);
    }
    // Later errors reach the request's listener; this one keeps an error between the two from going unhandled.
    socket.on('error', ignore);
    const secure = socket instanceof tls.TLSSocket;
    let connected = false;
    const settle = () => {
      socket.off('connect', onConnect).off('secureConnect', onReady).off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const onReady = () => {
      settle();
      resolve(socket);
    };
    const onConnect = () => {
      connected = true;
      if (!secure) onReady();
    };
    const onError = (error: NodeJS.ErrnoException) => {
      settle();
      socket.destroy();
      reject(secure && connected ? new TlsFailure(error.code ?? 'handshake_failed') : error);
    };
    const onAbort = () => {
      settle();
      socket.destroy();
      reject(new TimedOut());
    };
    socket.on('connect', onConnect).on('secureConnect', onReady).on('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

type Answer = Pick<WebhookResponse, 'status' | 'retryAfterSeconds' | 'body'>;

/**
 * POSTs over a connected socket and reads the answer: 4 KiB kept, at most 64 KiB read, then the connection is dropped.
 * Once the status has come, the answer is what arrived by then, even if the rest of the body never does.
 */
function exchange(socket: net.Socket, path: string, headers: http.OutgoingHttpHeaders, body: string, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let status: number | null = null;
    let retryAfterSeconds: number | null = null;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let readBytes = 0;
    const settle = () => {
      if (settled) return false;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      return true;
    };
    const finish = () => {
      if (settle()) resolve({ status, retryAfterSeconds, body: decodeKept(kept) });
    };
    const fail = (error: unknown) => {
      if (status !== null) return finish();
      if (settle()) reject(error);
    };
    const onAbort = () => fail(new TimedOut());
    signal.addEventListener('abort', onAbort, { once: true });

    const request = http.request({ method: 'POST', path, headers, createConnection: () => socket });
    request.on('error', fail);
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      retryAfterSeconds = parseRetryAfter(response.headers['retry-after']);
      response.on('data', (chunk: Buffer) => {
        if (keptBytes < RESPONSE_BODY_KEPT) {
          // A copy, so that a large chunk is not held alive by the slice of it we keep.
          const part = Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
          kept.push(part);
          keptBytes += part.length;
        }
        readBytes += chunk.length;
        if (readBytes >= RESPONSE_READ_LIMIT) finish();
      });
      response.on('end', finish);
      // Cut off mid-body: the status and what came of the body are the answer.
      response.on('error', finish);
      response.on('close', finish);
    });
    request.end(body);
  });
}

/** UTF-8 up to the last whole character: a character the 4 KiB cut through is left out, not shown as U+FFFD. */
function decodeKept(kept: Buffer[]): string {
  return new StringDecoder('utf8').write(Buffer.concat(kept));
}

const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Retry-After (RFC 9110 §10.2.3) in seconds from now: delay seconds, or an HTTP date in the form senders must use
 * (IMF-fixdate); a date already past is 0. Null when absent or not valid.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (!IMF_FIXDATE.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const ERRORS = new Map([
  ['ECONNREFUSED', 'connection_refused'],
  ['ECONNRESET', 'connection_reset'],
  ['EPIPE', 'connection_reset'],
  ['ETIMEDOUT', 'timeout'],
  ['EHOSTUNREACH', 'host_unreachable'],
  ['EHOSTDOWN', 'host_unreachable'],
  ['ENETUNREACH', 'network_unreachable'],
  ['ENETDOWN', 'network_unreachable'],
]);

/** A network error as short text: its code only, since messages can carry more than the log should. */
function describe(error: unknown): string {
  if (error instanceof TlsFailure) return `tls_error: ${error.code}`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined) return 'network_error';
  const known = ERRORS.get(code);
  if (known !== undefined) return known;
  // The parser's codes: the peer did not answer in HTTP/1.1 (or sent headers over the size limit).
  if (code.startsWith('HPE_')) return 'invalid_response';
  return `network_error: ${code}`;
}
