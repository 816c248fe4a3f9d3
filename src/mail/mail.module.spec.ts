import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../config/config.js';
import { ConfigModule } from '../config/config.module.js';
import { MailModule } from './mail.module.js';
import { MAIL_TEMPLATES, type MailTemplates } from './mail-templates.js';
import { MAILER, type Mailer } from './mailer.js';

let dataDir: string;

beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'leads-mail-module-'))));
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function app(env: Record<string, string>) {
  const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(loadConfig({ DATA_DIR: dataDir, ...env }, false)), MailModule] }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

describe('MailModule', () => {
  it('gives every module the one Mailer and the templates; without SMTP_URL a message is a file under DATA_DIR/mail', async () => {
    const nest = await app({});
    const mailer = nest.get<Mailer>(MAILER);
    const templates = nest.get<MailTemplates>(MAIL_TEMPLATES);
    const words = templates.test('pt-BR', { unsubscribeUrl: 'https://leads.empresa.example/u/t' });

    const result = await mailer.send({ to: 'time@empresa.example', messageId: 'test-1.r1@empresa.example', ...words });

    expect([mailer.destination, result.kind, readdirSync(join(dataDir, 'mail'))]).toEqual([join(dataDir, 'mail'), 'accepted', ['test-1.r1.eml']]);
    await nest.close();
  });

  it('with SMTP_URL, the SMTP server by host and port, without its credentials', async () => {
    const nest = await app({ SMTP_URL: 'smtps://leads:S3cret@mail.empresa.example' });
    expect(nest.get<Mailer>(MAILER).destination).toBe('smtps://mail.empresa.example:465');
    await nest.close();
  });
});
