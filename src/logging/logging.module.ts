import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/config.js';
import { assignRequestId, requestIdOf } from '../http/request-id.js';

/** Keys whose values are personal data or credentials; censored wherever they appear in a log object. */
export const REDACT = ['email', 'telefone', 'authorization', 'token', 'assertion', 'access_token', 'claim_token'].flatMap((key) => [
  key,
  `*.${key}`,
  `*.*.${key}`,
]);

@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            genReqId: (req: IncomingMessage, res: ServerResponse) => requestIdOf(req) || assignRequestId(req, res),
            redact: { paths: REDACT, censor: '[redacted]' },
            // Only what operations need: no headers (Authorization, cookies) and no query string (it may carry e-mails).
            serializers: {
              req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
                id: req.id,
                method: req.method,
                path: req.url.split('?')[0],
                remoteAddress: req.remoteAddress,
              }),
              res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
          },
        }),
      ],
    };
  }
}
