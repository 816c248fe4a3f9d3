import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { simpleParser } from 'mailparser';
import { loadConfig } from '../config/config.js';
import { EML_MAX_AGE_MS, EmlMailer } from './eml-mailer.js';
import { createMailer, mailFolder } from './mail.module.js';
import type { OutgoingMail } from './mailer.js';

const mail = (messageId: string, leadIds: string[], overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  to: 'time@empresa.example',
  subject: 'Novo lead: Beatriz Lima (site)',
  text: 'Nome: Beatriz Lima\nE-mail: beatriz@cliente.example',
  html: '<p>Nome: Beatriz Lima</p>',
  messageId: `${messageId}@empresa.example`,
  replyTo: 'beatriz@cliente.example',
  headers: { 'List-Unsubscribe': '<https://leads.empresa.example/u/tok>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  leadIds,
  ...overrides,
});

let dataDir: string;
let mailer: EmlMailer;
const files = () => readdirSync(mailFolder(loadConfig({ DATA_DIR: dataDir }, false))).sort();

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'leads-eml-'));
  mailer = createMailer(loadConfig({ DATA_DIR: dataDir, MAIL_FROM: 'Leads <leads@empresa.example>' }, false)) as EmlMailer;
});

afterEach(() => {
  mailer.close();
  jest.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('EmlMailer: without SMTP_URL, each message an .eml file under DATA_DIR/mail/', () => {
  it('is what createMailer gives without SMTP_URL, and its destination is the folder', () => {
    expect(mailer).toBeInstanceOf(EmlMailer);
    expect(mailer.destination).toBe(join(dataDir, 'mail'));
  });

  it('writes a file a mail reader opens: the message with its headers and both parts, named by its lead', async () => {
    expect(await mailer.send(mail('msg-1.rcpt-1', ['0b6f2a4e-1c9d-4d7e-8f00-1234567890ab']))).toEqual({ kind: 'accepted', code: null, response: null });

    expect(files()).toEqual(['msg-1.rcpt-1_lead-0b6f2a4e-1c9d-4d7e-8f00-1234567890ab.eml']);
    const raw = readFileSync(join(mailer.destination, files()[0]));
    const parsed = await simpleParser(raw);
    expect([parsed.from?.value, parsed.subject, parsed.messageId, parsed.text?.trim(), parsed.html, parsed.replyTo?.text]).toEqual([
      [{ name: 'Leads', address: 'leads@empresa.example' }],
      'Novo lead: Beatriz Lima (site)',
      '<msg-1.rcpt-1@empresa.example>',
      'Nome: Beatriz Lima\nE-mail: beatriz@cliente.example',
      '<p>Nome: Beatriz Lima</p>',
      'beatriz@cliente.example',
    ]);
    // The bytes SMTP would carry: CRLF line ends, the unsubscribe headers as sent.
    expect(raw.toString()).not.toMatch(/[^\r]\n/);
    expect(raw.toString()).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n');
  });

  it('writes a resend of the same message over its file, and leaves no temporary file', async () => {
    await mailer.send(mail('msg-1.rcpt-1', ['lead-a']));
    await mailer.send(mail('msg-1.rcpt-1', ['lead-a']));
    expect(readdirSync(mailer.destination, { withFileTypes: true }).map((entry) => entry.name)).toEqual(['msg-1.rcpt-1_lead-lead-a.eml']);
  });

  it('forgetLeads deletes the files of those leads and only those, a digest of many leads included', async () => {
    const many = Array.from({ length: 150 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await mailer.send(mail('msg-1.rcpt-1', ['lead-a']));
    await mailer.send(mail('msg-2.rcpt-1', ['lead-b']));
    await mailer.send(mail('digest-1.rcpt-1', many));
    await mailer.send(mail('test-1.rcpt-1', []));
    expect(files()).toEqual([
      'digest-1.rcpt-1.eml',
      'digest-1.rcpt-1.leads',
      'msg-1.rcpt-1_lead-lead-a.eml',
      'msg-2.rcpt-1_lead-lead-b.eml',
      'test-1.rcpt-1.eml',
    ]);

    expect(await mailer.forgetLeads(['lead-a'])).toBe(1);
    expect(files()).toEqual(['digest-1.rcpt-1.eml', 'digest-1.rcpt-1.leads', 'msg-2.rcpt-1_lead-lead-b.eml', 'test-1.rcpt-1.eml']);

    expect(await mailer.forgetLeads([many[120], 'lead-unknown'])).toBe(1);
    expect(files()).toEqual(['msg-2.rcpt-1_lead-lead-b.eml', 'test-1.rcpt-1.eml']);
    expect(await mailer.forgetLeads(['lead-a'])).toBe(0);
  });

  it('a message of an erased lead written after the erasure leaves no file', async () => {
    await mailer.forgetLeads(['lead-a']);
    expect((await mailer.send(mail('msg-1.rcpt-1', ['lead-a']))).kind).toBe('accepted');
    expect((await mailer.send(mail('digest-1.rcpt-1', ['l1', 'l2', 'l3', 'l4', 'lead-a']))).kind).toBe('accepted');
    await mailer.send(mail('msg-2.rcpt-1', ['lead-b']));
    expect(files()).toEqual(['msg-2.rcpt-1_lead-lead-b.eml']);
  });

  it('forgetLeads on a folder not yet made deletes nothing', async () => {
    expect(await mailer.forgetLeads(['lead-a'])).toBe(0);
  });

  it('prune deletes the files older than a week, and keeps the others', async () => {
    await mailer.send(mail('old-1.rcpt-1', ['lead-a']));
    await mailer.send(mail('new-1.rcpt-1', ['lead-b']));
    const old = new Date(Date.now() - EML_MAX_AGE_MS - 60_000);
    utimesSync(join(mailer.destination, 'old-1.rcpt-1_lead-lead-a.eml'), old, old);
    writeFileSync(join(mailer.destination, '.left-by-a-crash.tmp'), 'partial');
    utimesSync(join(mailer.destination, '.left-by-a-crash.tmp'), old, old);

    expect(await mailer.prune()).toBe(2);
    expect(files()).toEqual(['new-1.rcpt-1_lead-lead-b.eml']);
  });

  it('a folder it cannot write is a transient failure, retried later', async () => {
    if (process.getuid?.() === 0) {
      // root writes anywhere: make the folder's place a file instead
      writeFileSync(join(dataDir, 'mail'), 'not a folder');
    } else {
      mkdirSync(join(dataDir, 'mail'));
      chmodSync(join(dataDir, 'mail'), 0o500);
    }
    const result = await mailer.send(mail('msg-1.rcpt-1', ['lead-a']));
    expect([result.kind, result.code]).toEqual(['transient', null]);
  });

  it('warns at start with NODE_ENV=production, where nobody reads the files; not otherwise', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    mailer.start();
    expect(warn).not.toHaveBeenCalled();
    mailer.close();

    mailer = createMailer(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production' }, false)) as EmlMailer;
    mailer.start();
    expect(warn.mock.calls).toEqual([[{ destination: join(dataDir, 'mail') }, expect.stringContaining('SMTP_URL is not set')]]);
  });
});
