// HTTP with the service: problems, exit codes, 429 retries and network failures, on Node's global fetch.

/** 6 and 7 are `leads webhooks test`'s: the first attempt failed, or none was made in time. */
export const EXIT = { ok: 0, usage: 1, invalid: 2, auth: 3, rateLimited: 4, server: 5, webhookFailed: 6, webhookNotAttempted: 7 } as const;

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  hint?: string;
  /** Body errors name a JSON Pointer; query errors (400 invalid_query) name the parameter. */
  errors?: { pointer?: string; parameter?: string; code?: string; detail?: string }[];
  [key: string]: unknown;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/** A 2xx answer whose body is read as it arrives (Http.open). */
export interface StreamedResponse {
  status: number;
  headers: Headers;
  chunks: AsyncIterable<Uint8Array>;
}

/** A failure that ends the command with an exit code; `response` is kept so that --json can print it raw. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly response?: HttpResponse,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export const MAX_RATE_LIMIT_RETRIES = 3;
const MAX_WAIT_SECONDS = 60;
const TIMEOUT_MS = 30_000;

export class Http {
  constructor(
    readonly baseUrl: string,
    private readonly userAgent: string,
    private readonly log: (line: string) => void,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** One request; 429 answers are retried after Retry-After (at most 60 s each) up to three times. */
  async request(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return (await this.send(path, options, false)) as HttpResponse;
  }

  /**
   * Like request, but a 2xx answer is handed back unread (its body a stream, for downloads of any size): the timeout
   * then applies to each wait for the next chunk, not to the whole body. Other answers are read as request reads them.
   */
  async open(path: string, options: RequestOptions = {}): Promise<HttpResponse | StreamedResponse> {
    return this.send(path, options, true);
  }

  private async send(path: string, options: RequestOptions, stream: boolean): Promise<HttpResponse | StreamedResponse> {
    const method = options.method ?? (options.json !== undefined || options.form ? 'POST' : 'GET');
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent, ...options.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    for (let attempt = 0; ; attempt++) {
      const response = await this.once(method, path, headers, body, stream);
      if (response.status !== 429 || !('text' in response)) return response;
      if (attempt >= MAX_RATE_LIMIT_RETRIES) {
        throw new CliError(describeFailure(response, `rate limited; gave up after ${MAX_RATE_LIMIT_RETRIES} retries`), EXIT.rateLimited, response);
      }
      const seconds = Math.min(MAX_WAIT_SECONDS, Math.max(1, Number.parseInt(response.headers.get('retry-after') ?? '1', 10) || 1));
      this.log(`rate limited: retrying in ${seconds}s (retry ${attempt + 1} of ${MAX_RATE_LIMIT_RETRIES})`);
      await this.sleep(seconds * 1000);
    }
  }

  private async once(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    stream: boolean,
  ): Promise<HttpResponse | StreamedResponse> {
    const url = this.baseUrl + path;
    const abort = new AbortController();
    let timer = setTimeout(() => abort.abort(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    const unreachable = (error: unknown) => {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      return new CliError(`cannot reach ${this.baseUrl} (${why}); check the address or --base-url`, EXIT.server);
    };
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method, headers, body, redirect: 'follow', signal: abort.signal });
      if (stream && res.ok && res.body) {
        this.log(`${method} ${path} -> ${res.status}`);
        clearTimeout(timer);
        const reader = res.body.getReader();
        const chunks = async function* (): AsyncGenerator<Uint8Array> {
          try {
            for (;;) {
              clearTimeout(timer);
              timer = setTimeout(() => abort.abort(new Error(`no data for ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
              const { done, value } = await reader.read();
              if (done) return;
              yield value;
            }
          } catch (error) {
            const cause = (error as { cause?: { message?: string } }).cause;
            throw new CliError(`the answer from ${url} broke off (${cause?.message ?? (error as Error).message})`, EXIT.server);
          } finally {
            clearTimeout(timer);
            reader.releaseLock();
            if (!abort.signal.aborted) abort.abort();
          }
        };
        return { status: res.status, headers: res.headers, chunks: chunks() };
      }
      text = await res.text();
    } catch (error) {
      clearTimeout(timer);
      throw unreachable(error);
    }
    clearTimeout(timer);
    this.log(`${method} ${path} -> ${res.status}`);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }
}

/** Exit code for an unsuccessful answer. */
export function exitCodeFor(status: number): number {
  if ([400, 409, 413, 415, 422].includes(status)) return EXIT.invalid;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 429) return EXIT.rateLimited;
  return EXIT.server;
}

export function asProblem(response: HttpResponse): Problem | undefined {
  const body = response.body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Problem) : undefined;
}

/** Readable lines for a problem: its code, detail, each errors[] pointer with its detail, and the hint. */
export function describeFailure(response: HttpResponse, fallback?: string): string {
  const problem = asProblem(response);
  if (!problem || (problem.code === undefined && problem.detail === undefined)) {
    return `error: HTTP ${response.status}${fallback ? `: ${fallback}` : ''}`;
  }
  const lines = [`error: ${problem.code ?? 'unknown'} (HTTP ${response.status}): ${problem.detail ?? problem.title ?? ''}`];
  for (const error of problem.errors ?? []) {
    lines.push(`  ${error.parameter !== undefined ? `query parameter ${error.parameter}` : error.pointer || '(body)'}: ${error.detail ?? error.code ?? ''}`);
  }
  if (problem.hint) lines.push(`hint: ${problem.hint}`);
  if (fallback && problem.status === 429) lines.push(`(${fallback})`);
  return lines.join('\n');
}

/** The CliError of an unsuccessful answer: its problem described, the exit code of its status. */
export function failure(response: HttpResponse): CliError {
  return new CliError(describeFailure(response), exitCodeFor(response.status), response);
}

/** Throws a CliError for any non-2xx answer. */
export function ensureOk(response: HttpResponse): HttpResponse {
  if (response.status >= 200 && response.status < 300) return response;
  throw failure(response);
}
