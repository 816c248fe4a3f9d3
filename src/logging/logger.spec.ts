import { pino } from 'pino';
import { createLogger, NestPinoLogger, REDACT } from './logger.js';

describe('log redaction', () => {
  it('censors e-mails, telephones, authorization and tokens wherever a logged object carries them (three levels)', () => {
    const lines: string[] = [];
    const logger = pino({ redact: { paths: REDACT, censor: '[redacted]' } }, { write: (line: string) => lines.push(line) });
    logger.info(
      {
        email: 'ana@exemplo.com',
        telefone: '+55 11 98765-4321',
        req: { headers: { authorization: 'Bearer secret-1' }, email: 'bia@exemplo.com' },
        oauth: { token: 'secret-2', assertion: 'secret-3', access_token: 'secret-4', claim_token: 'clm_secret-5' },
        kept: 'visible',
      },
      'redaction check',
    );
    const out = lines.join('');
    for (const secret of ['ana@exemplo.com', '98765-4321', 'bia@exemplo.com', 'secret-1', 'secret-2', 'secret-3', 'secret-4', 'secret-5']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('visible');
    expect(out.match(/\[redacted\]/g)?.length).toBe(8);
  });
});

describe('NestPinoLogger', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = new NestPinoLogger(createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) }));
    return { lines, logger };
  };

  it("writes Nest's (message, context) and pino's (object, message, context) calls as one line each, with the context", () => {
    const { lines, logger } = capture();
    logger.log('Mapped {/api/v1/lead, POST} route', 'RouterExplorer');
    logger.warn({ error: { message: 'down' }, email: 'ana@exemplo.com' }, 'database unavailable', 'ProblemFilter');
    logger.debug('not at info', 'Quiet');
    logger.error('Unable to connect to the database. Retrying (1)...', 'Error: connect ECONNREFUSED 127.0.0.1:5432', 'TypeOrmModule');
    expect(lines).toMatchObject([
      { level: 30, context: 'RouterExplorer', msg: 'Mapped {/api/v1/lead, POST} route' },
      { level: 40, context: 'ProblemFilter', msg: 'database unavailable', error: { message: 'down' }, email: '[redacted]' },
      { level: 50, context: 'TypeOrmModule', msg: 'Unable to connect to the database. Retrying (1)...', details: ['Error: connect ECONNREFUSED 127.0.0.1:5432'] },
    ]);
    expect(lines).toHaveLength(3);
  });

  it('logs an Error by its safe parts', () => {
    const { lines, logger } = capture();
    logger.error(new Error('boom'), 'Bootstrap');
    expect(lines[0]).toMatchObject({ level: 50, context: 'Bootstrap', msg: 'boom', error: { type: 'Error', message: 'boom', stack: expect.stringContaining('boom') } });
  });
});
