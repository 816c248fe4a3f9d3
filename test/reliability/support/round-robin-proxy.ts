import { once } from 'node:events';
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';

/** Hop-by-hop fields (RFC 9110 §7.6.1): about one connection, never forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'];

const endToEnd = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));

/**
 * A minimal load balancer on loopback: each request goes to the next upstream in turn, with the client's address
 * appended to X-Forwarded-For as a real proxy does (the services trust one hop: TRUST_PROXY=1). The answer names the
 * instance that served it in X-Upstream.
 */
export class RoundRobinProxy {
  baseUrl = '';
  private server?: Server;
  /**
   * Idle connections to the upstreams close after this, as a balancer's do (nginx and AWS ALB: 60 s). An upstream must
   * keep them open longer (KEEP_ALIVE_TIMEOUT), or a request sent as it closes one is lost and answered 502. (Node's
   * agent also honours an upstream's shorter Keep-Alive hint, which those balancers do not.)
   */
  static readonly IDLE_TIMEOUT_S = 10;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: RoundRobinProxy.IDLE_TIMEOUT_S * 1000 });
  private upstreams: URL[] = [];
  private next = 0;

  /** Which upstreams take the following requests. */
  route(upstreams: string[]): void {
    this.upstreams = upstreams.map((upstream) => new URL(upstream));
    this.next = 0;
  }

  /** Listens at once (its address can be configured into the upstreams); route() says where requests go. */
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const target = this.upstreams[this.next++ % this.upstreams.length];
      const forwarded = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
      const outgoing = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...endToEnd(req.headers), 'x-forwarded-for': forwarded },
          agent: this.agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode!, { ...endToEnd(answer.headers), 'x-upstream': target.origin });
          answer.pipe(res);
        },
      );
      outgoing.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(outgoing);
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
