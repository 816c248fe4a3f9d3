import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from './metrics.js';

/**
 * The Prometheus listener, on its own port (METRICS_PORT) and address (METRICS_HOST, loopback by default), never on the
 * public one: the exposition tells traffic, refusals and backlog to whoever can read it. It answers GET and HEAD
 * /metrics and nothing else.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const listen = this.config.observability.metrics;
    if (!listen) return;
    const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Use GET\n');
        return;
      }
      this.metrics.exposition().then(
        (body) => res.writeHead(200, { 'Content-Type': this.metrics.contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
        (error: unknown) => {
          this.logger.error({ error: (error as Error).message }, 'metrics exposition failed');
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics unavailable\n');
        },
      );
    });
    // A scraper keeps its connection; nothing else should hold one open, nor many.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
    server.maxConnections = 16;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  /** Where the listener answers (its port when METRICS_PORT=0), or undefined when it is off. */
  address(): { host: string; port: number } | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    return address ? { host: address.address, port: address.port } : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
