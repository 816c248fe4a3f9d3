import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { pino } from 'pino';
import { createLogger, logDestination, NestPinoLogger, REDACT } from './logger.js';

describe('log redaction', () => {
  it('censors e-mails, telephones, authorization, tokens and secrets wherever a logged object carries them (three levels)', () => {
    const lines: string[] = [];
    const logger = pino({ redact: { paths: REDACT, censor: '[redacted]' } }, { write: (line: string) => lines.push(line) });
    logger.info(
      {
        email: 'ana@exemplo.com',
        telefone: '+55 11 98765-4321',
        req: { headers: { authorization: 'Bearer secret-1' }, email: 'bia@exemplo.com' },
        oauth: { token: 'secret-2', assertion: 'secret-3', access_token: 'secret-4', claim_token: 'clm_secret-5' },
        body: { grant_type: 'client_credentials', client_id: 'op_visible', client_secret: 'secret-6' },
        client: { secretHash: 'secret-7', previousSecretHash: 'secret-8' },
        webhook: { url: 'https://hooks.example/visible', secret: 'whsec_secret-9', previous_secret: 'whsec_secret-10', webhookSecret: 'secret-11' },
        endpoint: { row: { webhook_secret: 'secret-12', previousSecret: 'secret-13' } },
        config: { secretsKey: 'secret-14', SECRETS_KEY: 'secret-15', secrets_key: 'secret-16' },
        key: { kid: 'at_visible', privateJwk: 'secret-17', private_jwk: 'secret-18' },
        identity: { refresh_token: 'rt_secret-19', body: { refreshToken: 'rt_secret-20' } },
        kept: 'visible',
      },
      'redaction check',
    );
    const out = lines.join('');
    const secrets = [
      'ana@exemplo.com',
      '98765-4321',
      'bia@exemplo.com',
      'secret-1',
      'secret-2',
      'secret-3',
      'secret-4',
      'secret-5',
      'secret-19',
      'secret-20',
      'secret-6',
      'secret-7',
      'secret-8',
      'secret-9',
      'secret-10',
      'secret-11',
      'secret-12',
      'secret-13',
      'secret-14',
      'secret-15',
      'secret-16',
      'secret-17',
      'secret-18',
    ];
    for (const secret of secrets) expect(out).not.toContain(secret);
    expect(out).toContain('visible');
    expect(out).toContain('op_visible');
    expect(out).toContain('https://hooks.example/visible');
    expect(out).toContain('at_visible');
    expect(JSON.parse(out)).toMatchObject({ webhook: { secret: '[redacted]', previous_secret: '[redacted]' }, key: { privateJwk: '[redacted]' } });
    expect(out.match(/\[redacted\]/g)?.length).toBe(23);
  });
});

describe('NestPinoLogger', () => {
  const capture = (level = 'info') => {
    const lines: Record<string, unknown>[] = [];
    const logger = new NestPinoLogger(createLogger(level, { write: (line: string) => lines.push(JSON.parse(line)) }));
    return { lines, logger };
  };

  it("writes Nest's (message, context) and pino's (object, message, context) calls as one line each, with the context", () => {
    const { lines, logger } = capture();
    logger.log('Redis connected', 'RateLimit');
    logger.warn({ error: { message: 'down' }, email: 'ana@exemplo.com' }, 'database unavailable', 'ProblemFilter');
    logger.debug('not at info', 'Quiet');
    logger.error('Unable to connect to the database. Retrying (1)...', 'Error: connect ECONNREFUSED 127.0.0.1:5432', 'TypeOrmModule');
    expect(lines).toMatchObject([
      { level: 30, context: 'RateLimit', msg: 'Redis connected' },
      { level: 40, context: 'ProblemFilter', msg: 'database unavailable', error: { message: 'down' }, email: '[redacted]' },
      {
        level: 50,
        context: 'TypeOrmModule',
        msg: 'Unable to connect to the database. Retrying (1)...',
        details: ['Error: connect ECONNREFUSED 127.0.0.1:5432'],
      },
    ]);
    expect(lines).toHaveLength(3);
  });

  it("writes Nest's start-up lines (a line per module and route) at debug, so that info shows none of them", () => {
    const bootstrap = (logger: NestPinoLogger) => {
      logger.log('Starting Nest application...', 'NestFactory');
      logger.log('AppModule dependencies initialized', 'InstanceLoader');
      logger.log('LeadsController {/api/v1}:', 'RoutesResolver');
      logger.log('Mapped {/api/v1/lead, POST} route', 'RouterExplorer');
      logger.log('Mapped {/api/v1/graphql, POST} route', 'GraphQLModule');
      logger.log('Nest application successfully started', 'NestApplication');
      logger.warn('a warning keeps its level', 'InstanceLoader');
    };
    const info = capture('info');
    bootstrap(info.logger);
    expect(info.lines).toMatchObject([{ level: 40, context: 'InstanceLoader', msg: 'a warning keeps its level' }]);
    const debug = capture('debug');
    bootstrap(debug.logger);
    expect(debug.lines.map((line) => line.level)).toEqual([20, 20, 20, 20, 20, 20, 40]);
  });

  it('logs an Error by its safe parts', () => {
    const { lines, logger } = capture();
    logger.error(new Error('boom'), 'Bootstrap');
    expect(lines[0]).toMatchObject({
      level: 50,
      context: 'Bootstrap',
      msg: 'boom',
      error: { type: 'Error', message: 'boom', stack: expect.stringContaining('boom') },
    });
  });
});

describe('pretty log lines (LOG_FORMAT=pretty)', () => {
  it('writes one line per event: time, level, [context] message; a request as method, path, status and time; an error below', async () => {
    const output = new PassThrough();
    let text = '';
    output.on('data', (chunk) => (text += chunk));
    const logger = createLogger('info', await logDestination('pretty', output));
    new NestPinoLogger(logger).log('listening on http://localhost:3000', 'Server');
    logger.info(
      { req: { id: 'r-1', method: 'POST', path: '/api/v1/lead', remoteAddress: '::1' }, res: { statusCode: 201 }, responseTime: 7 },
      'request completed',
    );
    logger.warn({ context: 'RateLimit', error: { message: 'connect ECONNREFUSED' }, email: 'ana@exemplo.com' }, 'Redis unavailable');
    const lines = stripVTControlCharacters(text).trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Server\] listening on http:\/\/localhost:3000$/),
      expect.stringMatching(/^\[[\d:.]+\] INFO: request completed POST \/api\/v1\/lead 201 7 ms$/),
      expect.stringMatching(/^\[[\d:.]+\] WARN: \[RateLimit\] Redis unavailable \{"email":"\[redacted\]"\}$/),
      '    error: {',
      '      "message": "connect ECONNREFUSED"',
      '    }',
    ]);
  });

  it('leaves JSON to pino itself', async () => {
    expect(await logDestination('json')).toBeUndefined();
  });
});
