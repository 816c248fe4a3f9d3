import { createServer, IncomingMessage, type RequestListener, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';

interface ExpressPrototypes {
  request: object;
  response: object;
}

/**
 * Express moves every request and response onto its own prototypes with Object.setPrototypeOf, once per request.
 * Changing the prototype of a live object is slow in V8, and what the moved objects reach outlives the next
 * scavenges: in a bare node:http server that one call halved throughput and sent a quarter of all allocation to old
 * space. Here the server builds req and res from subclasses whose prototypes Express then uses as its own, so that
 * Express's call finds the prototype already in place and does nothing.
 */
export class PrototypedExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    // TLS, connection tracking and 503-on-close keep Nest's own server (none is used here).
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) return super.initHttpServer(options);
    const app = this.getInstance<RequestListener & ExpressPrototypes>();
    class Request extends IncomingMessage {}
    class Response extends ServerResponse {}
    Object.setPrototypeOf(Request.prototype, app.request);
    Object.setPrototypeOf(Response.prototype, app.response);
    app.request = Request.prototype;
    app.response = Response.prototype;
    this.httpServer = createServer({ IncomingMessage: Request, ServerResponse: Response }, app);
  }
}
