import type { SendMailOptions } from 'nodemailer';
import { encodeWord } from 'nodemailer/lib/mime-funcs/index.js';
import type DKIM from 'nodemailer/lib/dkim/index.js';
import type { MailConfig } from '../config/config.js';
import type { OutgoingMail } from './mailer.js';

/**
 * The header fields the DKIM signature covers, named here rather than left to Nodemailer's default list: RFC 8058 honours
 * a one-click unsubscribe only when the signature covers List-Unsubscribe and List-Unsubscribe-Post (src/mail/mailer.spec.ts
 * checks the `h=` tag of a signed message).
 */
export const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Id',
  'Auto-Submitted',
];

/** Nodemailer's `dkim` transport option for DKIM_*, or undefined when none is configured. */
export function dkimOptions(config: MailConfig): DKIM.Options | undefined {
  if (!config.dkim) return undefined;
  return {
    domainName: config.dkim.domain,
    keySelector: config.dkim.selector,
    privateKey: config.dkim.privateKey,
    headerFieldNames: DKIM_SIGNED_HEADERS.join(':'),
  };
}

/** Header values are one line: a line break in one would start a header of the sender's choosing. */
export const oneLine = (text: string): string => text.replace(/[\r\n\u2028\u2029]+/g, ' ').replace(/\p{Cc}/gu, '');

/**
 * The message as Nodemailer composes it, the same for the SMTP transport and the .eml files. Addresses are given as
 * objects, so Nodemailer does not parse them as lists: a Reply-To (the lead's address) is one address, whatever it holds.
 */
export function messageOf(mail: OutgoingMail, config: MailConfig): SendMailOptions {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(mail.headers ?? {})) {
    if (!/^[!-9;-~]+$/.test(name)) throw new Error(`mail: invalid header name ${JSON.stringify(name)}`);
    headers[name] = oneLine(value);
  }
  return {
    from: { name: config.fromName ?? '', address: config.fromAddress },
    to: { name: '', address: oneLine(mail.to) },
    replyTo: mail.replyTo === undefined ? undefined : { name: '', address: oneLine(mail.replyTo) },
    subject: plainSubject(oneLine(mail.subject)),
    text: mail.text,
    html: mail.html,
    messageId: `<${oneLine(mail.messageId).replace(/^<|>$/g, '')}>`,
    headers,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/**
 * A subject shown as written. Nodemailer passes a well-formed RFC 2047 encoded word through as is, and the reader's
 * client decodes it: a lead named "=?UTF-8?B?4oCu?=" would smuggle an RTL override or a line break into the subject.
 * Such a subject is sent as encoded words of its own (whose decoded text no client decodes again).
 */
function plainSubject(subject: string): string {
  return subject.includes('=?') ? encodeWord(subject, 'B', 52) : subject;
}
