import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/config.js';
import { PrototypedExpressAdapter } from './http/express-adapter.js';
import { createLogger, NestPinoLogger, requestLogging } from './logging/logger.js';
import { ErrorCode } from './problem/error-catalog.js';
import { buildProblem, PROBLEM_MEDIA_TYPE } from './problem/problem.js';

/** Headers a web form or agent on another origin may read. */
const EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Deprecation', 'Sunset', 'Link', 'X-Request-Id', 'Location', 'ETag'];

/** Timeouts that keep slow or idle clients from holding connections (documented in the README). */
export const serverTimeouts = (config: AppConfig) => ({
  keepAliveTimeout: config.keepAliveTimeoutSeconds * 1000,
  headersTimeout: 15_000,
  requestTimeout: 30_000,
  // Node checks the two timeouts above only this often (30 s by default, which made a 15 s timeout fire at up to 45 s).
  connectionsCheckingInterval: 1_000,
});

/** Builds the whole application; main.ts and every e2e suite go through here, so tests run what production runs. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  const logger = createLogger(config.logLevel);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new PrototypedExpressAdapter(), { bodyParser: false, logger: new NestPinoLogger(logger) });
  app.set('trust proxy', config.trustProxy);
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.use(requestLogging(logger));
  app.use(
    fixedHeaders({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          // Swagger UI sets inline styles on its elements.
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
      // Discovery documents, the form script and the CLI are fetched by other sites and tools.
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    }),
  );
  app.enableCors({
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'Authorization', 'Idempotency-Key', 'X-Request-Id', 'Mcp-Protocol-Version', 'Mcp-Session-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  app.enableShutdownHooks();
  answerMalformedRequests(app.getHttpServer() as Server, config.publicBaseUrl);
  return app;
}

/**
 * helmet's headers are the same on every response here (no nonces), so its dozen middlewares run once, at start, and
 * each request gets their result.
 */
function fixedHeaders(options: Parameters<typeof helmet>[0]) {
  const headers = new Map<string, string>();
  const recorder = { setHeader: (name: string, value: string) => headers.set(name, value), removeHeader: (name: string) => headers.delete(name) };
  helmet(options)({} as Request, recorder as unknown as Response, () => undefined);
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeaders(headers);
    next();
  };
}

const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['request_header_fields_too_large', 'The request line and headers exceed 16 KiB.'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request did not arrive in time.'],
  default: ['bad_request', 'The HTTP request could not be parsed.'],
};

/** Node answers malformed HTTP (oversized headers, bad framing) itself, in plain text; answer with a problem instead. */
function answerMalformedRequests(server: Server, baseUrl: string): void {
  server.removeAllListeners('clientError');
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's own handler: no answer on a dead socket, nor after a response that has already started.
    const responding = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (!socket.writable || responding || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [code, detail] = CLIENT_ERRORS[error.code ?? ''] ?? CLIENT_ERRORS.default;
    const problem = buildProblem(baseUrl, code, detail, { instance: '/', requestId: randomUUID() });
    const body = JSON.stringify(problem);
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: ${PROBLEM_MEDIA_TYPE}; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${problem.request_id}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
