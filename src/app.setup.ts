import type { Server, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { isInboxPath } from './inbox/inbox-path.js';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/config.js';
import { IPV6_PREFIX_SETTING } from './request/client-ip.js';
import { SCREENING_HEADERS } from './screening/lead-evidence.js';
import { limitConnections } from './server/connection-limits.js';
import { HEADER_BLOCK_LIMIT_BYTES, HEADERS_TIMEOUT_MS, inKiB, REQUEST_TIMEOUT_MS } from './server/http-limits.js';
import { PrototypedExpressAdapter } from './server/express-adapter.js';
import { type Refusal, strictRequests } from './server/strict-requests.js';
import { createLogger, logDestination, NestPinoLogger, requestLogging } from './logging/logger.js';
import { buildProblem, PROBLEM_MEDIA_TYPE } from './problem/problem.js';
import { httpTelemetry } from './telemetry/http-telemetry.js';
import { Metrics } from './telemetry/metrics.js';
import { TRACING } from './telemetry/telemetry.module.js';
import type { Tracing } from './telemetry/tracing.js';

/** Headers a web form or agent on another origin may read. */
const EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'X-Request-Id',
  'Location',
  'ETag',
  'Content-Disposition',
];

/** Timeouts that keep slow or idle clients from holding connections (documented in the README). */
export const serverTimeouts = (config: AppConfig) => ({
  keepAliveTimeout: config.keepAliveTimeoutSeconds * 1000,
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  // Node checks the two timeouts above only this often (30 s by default, which made a 15 s timeout fire at up to 45 s).
  connectionsCheckingInterval: 1_000,
});

/**
 * Builds the whole application; main.ts and every e2e suite go through here, so tests run what production runs. A test
 * may pass a root module that imports AppModule beside routes of its own.
 */
export async function createApp(config: AppConfig, root: DynamicModule = AppModule.forRoot(config)): Promise<NestExpressApplication> {
  const traced = config.observability.tracing !== null;
  const logger = createLogger(config.logLevel, await logDestination(config.logFormat), traced);
  const app = await NestFactory.create<NestExpressApplication>(root, new PrototypedExpressAdapter(), { bodyParser: false, logger: new NestPinoLogger(logger) });
  app.set('trust proxy', config.trustProxy);
  app.set(IPV6_PREFIX_SETTING, config.ipv6PrefixLength);
  app.set('x-powered-by', false);
  app.set('etag', false);
  // First: it times the whole request, and its span is the one the rest of the request runs in.
  const telemetry = httpTelemetry(config.observability.metrics ? app.get(Metrics) : null, app.get<Tracing | null>(TRACING));
  if (telemetry) app.use(telemetry);
  app.use(requestLogging(logger, traced));
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
  const cors = {
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'Authorization', 'Idempotency-Key', 'X-Request-Id', 'Mcp-Protocol-Version', 'Mcp-Session-Id', ...SCREENING_HEADERS],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
  // The inbox is for its own origin only: no CORS headers there, not even on a preflight (origin false: none at all).
  // No other site's page may call the inbox, nor make a person's privacy request from its visitors' browsers (each
  // from its own address, past the per-client limit on codes): those are for this service's own pages and for clients
  // that are not browsers.
  const sameOriginOnly = (path: string) => isInboxPath(path) || path.startsWith('/api/v1/privacy/');
  app.enableCors((req: Request, done) => done(null, sameOriginOnly(req.path) ? { origin: false } : cors));
  const server = app.getHttpServer() as Server;
  answerMalformedRequests(server, config.publicBaseUrl);
  strictRequests(server, config.maxHeaders, (res, refusal) => writeProblem(res, config.publicBaseUrl, refusal));
  limitConnections(server, {
    maxConnections: config.maxConnections,
    maxPerAddress: config.maxConnectionsPerAddress,
    writeTimeoutMs: config.writeTimeoutSeconds * 1000,
    ipv6PrefixLength: config.ipv6PrefixLength,
    isTrustedProxy: (app.getHttpAdapter().getInstance() as Express).get('trust proxy fn') as (address: string, hop: number) => boolean,
  });
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

const CLIENT_ERRORS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: ['request_header_fields_too_large', `The request line and headers exceed ${inKiB(HEADER_BLOCK_LIMIT_BYTES)}.`],
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
    const { status, headers, body } = closingProblem(baseUrl, CLIENT_ERRORS[error.code ?? ''] ?? CLIENT_ERRORS.default);
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
  });
}

/** Requests refused before routing (strict-requests.ts) get the same answer, through Node's response. */
function writeProblem(res: ServerResponse, baseUrl: string, refusal: Refusal): void {
  const { status, headers, body } = closingProblem(baseUrl, refusal);
  res.writeHead(status, headers).end(body);
}

/** A problem answered outside the app (the route is unknown), after which the connection is closed. */
function closingProblem(baseUrl: string, [code, detail]: Refusal) {
  const problem = buildProblem(baseUrl, code, detail, { instance: '/', requestId: randomUUID() });
  const body = JSON.stringify(problem);
  const headers = {
    'Content-Type': `${PROBLEM_MEDIA_TYPE}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': problem.request_id,
    Connection: 'close',
  };
  return { status: problem.status, headers, body };
}
