import { pino } from 'pino';
import { REDACT } from './logger.js';

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
