import { simpleParser } from 'mailparser';
import { createTransport } from 'nodemailer';
import { loadConfig } from '../config/config.js';
import { messageOf } from './mail-message.js';

describe('messageOf', () => {
  const config = loadConfig({ DATA_DIR: '/tmp/unused', MAIL_FROM: 'Leads <leads@empresa.example>' }, false).mail;
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const subjectOf = async (subject: string) => {
    const mail = { to: 'time@empresa.example', subject, text: 'x', html: '<p>x</p>', messageId: 'msg_1.r@empresa.example' };
    const { message } = await transport.sendMail(messageOf(mail, config));
    return (await simpleParser(message as Buffer)).subject;
  };

  it('shows a subject as written, an encoded word in a lead’s name included (no smuggled RTL override or line break)', async () => {
    // A lead's name may be any printable text: "=?UTF-8?B?4oCu…?=" would be decoded by the reader's client into U+202E.
    for (const subject of [
      'Novo lead: =?UTF-8?B?4oCuIGdub3Jl?= (site)',
      'New lead: =?utf-8?q?a=0D=0ABcc:_x?=',
      `Novo lead: ${'=?UTF-8?B?4oCu?= é '.repeat(12)}`.trim(),
      'Novo lead: Beatriz Lima (site)',
      'Novo lead: José Conceição',
    ]) {
      expect(await subjectOf(subject)).toBe(subject);
    }
  });
});
