import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoggerService } from '@nestjs/common';
import { pino, type Level, type Logger } from 'pino';
import type { LogFormat } from '../config/config.js';
import { assignRequestId } from '../request/request-id.js';
import { activeTraceIds } from '../telemetry/trace-ids.js';
import { safeError } from './safe-error.js';

/** Keys whose values are personal data or credentials; censored wherever they appear in a log object. */
export const REDACT = [
  'email',
  'telefone',
  'authorization',
  'token',
  'assertion',
  'access_token',
  'claim_token',
  'refresh_token',
  'refreshToken',
  // Operator clients (src/oauth/operator-clients.service.ts): the secret, and the hashes that verify it.
  'client_secret',
  'secretHash',
  'previousSecretHash',
  // Webhook endpoints' signing secrets (docs/decisions/0027-webhooks-outbox.md), as columns, properties and bodies.
  'secret',
  'previous_secret',
  'previousSecret',
  'webhook_secret',
  'webhookSecret',
  // The service key that seals stored secrets, and the signing keys it seals (src/secrets/).
  'SECRETS_KEY',
  'secrets_key',
  'secretsKey',
  'private_jwk',
  'privateJwk',
].flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

/** `traced`: every line written inside a traced request or delivery carries its `trace_id` and `span_id`. */
export function createLogger(level: string, destination?: pino.DestinationStream, traced = false): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, mixin: traced ? () => activeTraceIds() ?? {} : undefined }, destination);
}

/**
 * Where log lines go: standard output as JSON, or, for a person at a terminal, through pino-pretty as one coloured
 * line each (a request as method, path, status and time). Loaded only when asked for: production never pays for it.
 */
export async function logDestination(format: LogFormat, output: NodeJS.WritableStream = process.stdout): Promise<pino.DestinationStream | undefined> {
  if (format === 'json') return undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination: output,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,req,res,responseTime',
    messageFormat: '{if context}[{context}] {end}{msg}{if req.method} {req.method} {req.path} {res.statusCode} {responseTime} ms{end}',
    singleLine: true,
  });
}

/**
 * Nest's own start-up chatter (a line per module and per route, 60-odd in all) goes to debug: at info, start-up is
 * the one line main.ts writes.
 */
const BOOTSTRAP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'GraphQLModule', 'NestApplication']);

/**
 * Nest's own messages and `new Logger(context)` calls, as pino lines. Callers pass pino's (object, message) pair or a
 * plain message; Nest appends the context last.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write(BOOTSTRAP_CONTEXTS.has(params.at(-1) as string) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const context = params.length > 0 && typeof params.at(-1) === 'string' ? params.pop() : undefined;
    if (message instanceof Error) this.logger[level]({ context, error: safeError(message) }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[level]({ context, ...message }, params[0] as string | undefined);
    // Nest's own (message, stack) and (message, ...details): keep what follows the message, e.g. why a connection failed.
    else this.logger[level](params.length ? { context, details: params.map(String) } : { context }, String(message));
  }
}

/**
 * Gives every request its id and, when info is on, one line as it ends: method, path (never the query string, which
 * may carry e-mails), status and time. Plain middleware: no child logger or async context per request.
 */
export function requestLogging(logger: Logger, traced = false) {
  const enabled = logger.isLevelEnabled('info');
  return (req: IncomingMessage & { id?: string }, res: ServerResponse, next: () => void): void => {
    const id = assignRequestId(req, res);
    req.id = id;
    if (enabled) {
      const start = performance.now();
      const url = req.url ?? '';
      // The 'close' listener runs outside the request's context: its trace ids are taken now.
      const trace = traced ? activeTraceIds() : undefined;
      res.once('close', () => {
        const line = {
          ...trace,
          req: { id, method: req.method, path: url.split('?')[0], remoteAddress: req.socket.remoteAddress },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - start),
        };
        if (!res.writableFinished) logger.info(line, 'request aborted');
        else if (res.statusCode >= 500) logger.error(line, 'request failed');
        else logger.info(line, 'request completed');
      });
    }
    next();
  };
}
