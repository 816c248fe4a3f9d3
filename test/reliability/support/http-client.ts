import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Tally } from './tally.js';

export interface Call {
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Reply {
  /** 0 when no answer came (refused, reset, or over the client's deadline); `error` then says why. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  ms: number;
  error?: string;
}

export const JSON_HEADERS = { 'Content-Type': 'application/json' };

/**
 * A keep-alive HTTP/1.1 client for load on loopback. A call never rejects: it resolves with the answer, or with why
 * there was none, after at most `timeoutMs`, so a hanging server shows up as an outcome and never as a stuck test.
 */
export class HttpClient {
  /** Where every reply is counted; a scenario swaps in a fresh one per phase. */
  tally = new Tally();
  private readonly agent: Agent;
  private readonly target: URL;
  private readonly timeoutMs: number;
  private readonly localAddress?: string;

  /** `localAddress`: the loopback address to connect from (127.0.0.2…), to be a client of its own to per-address limits. */
  constructor(baseUrl: string, { sockets, timeoutMs = 15_000, localAddress }: { sockets: number; timeoutMs?: number; localAddress?: string }) {
    this.target = new URL(baseUrl);
    // With a timeout, Node's agent also honours the server's Keep-Alive hint (Node 20 ignores it without one): an idle
    // socket is dropped a second before the server closes it, never reused as it closes (ECONNRESET).
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, timeout: timeoutMs });
    this.timeoutMs = timeoutMs;
    this.localAddress = localAddress;
  }

  send({ method = 'GET', path, headers = {}, body }: Call): Promise<Reply> {
    const started = performance.now();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (reply: Omit<Reply, 'ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        const complete = { ...reply, ms: performance.now() - started };
        this.tally.record(complete);
        resolve(complete);
      };
      const fail = (error: NodeJS.ErrnoException) => finish({ status: 0, headers: {}, body: '', error: error.code ?? error.message });
      const req = request(
        { host: this.target.hostname, port: this.target.port, method, path, headers, agent: this.agent, localAddress: this.localAddress },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => finish({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', fail);
        },
      );
      const deadline = setTimeout(() => req.destroy(Object.assign(new Error('no answer in time'), { code: 'CLIENT_TIMEOUT' })), this.timeoutMs);
      req.on('error', fail);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
