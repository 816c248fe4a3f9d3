import { generateKeyPairSync } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { loadConfig } from '../config/config.js';
import type { OutgoingMail } from './mailer.js';
import { SmtpMailer, type SmtpTestOptions } from './smtp-mailer.js';

/** What the server received: the bytes, and whether the session was encrypted when the message came. */
interface Received {
  raw: Buffer;
  secure: boolean;
  user: string | undefined;
}

interface TestServer {
  url: string;
  received: Received[];
  connections: number;
  /** The SMTP reply each RCPT TO gets, by address (accepted when absent). */
  rcptReplies: Map<string, { code: number; message: string }>;
  close(): Promise<void>;
}

async function startSmtp(options: Partial<SMTPServerOptions> = {}): Promise<TestServer> {
  const received: Received[] = [];
  const rcptReplies = new Map<string, { code: number; message: string }>();
  const counts = { connections: 0 };
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    onConnect(_session, callback) {
      counts.connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      if (auth.username === 'leads' && auth.password === 'p@ss:word/1') callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const reply = rcptReplies.get(address.address);
      callback(reply ? Object.assign(new Error(reply.message), { responseCode: reply.code }) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({ raw: Buffer.concat(chunks), secure: session.secure, user: session.user as string | undefined });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    rcptReplies,
    get connections() {
      return counts.connections;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const mail = (overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  to: 'time@empresa.example',
  subject: 'Novo lead: Beatriz Lima (site)',
  text: 'Nome: Beatriz Lima',
  html: '<p>Nome: Beatriz Lima</p>',
  messageId: 'msg-1.rcpt-1@empresa.example',
  replyTo: 'beatriz@cliente.example',
  headers: {
    'List-Unsubscribe': '<https://leads.empresa.example/unsubscribe/tok>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'Auto-Submitted': 'auto-generated',
  },
  leadIds: ['lead-1'],
  ...overrides,
});

/** A mailer for `server`, trusting its self-signed certificate (what the test checks is that STARTTLS is used at all). */
function mailerFor(url: string, env: Record<string, string> = {}, timeouts?: SmtpTestOptions['timeouts']): SmtpMailer {
  const config = loadConfig({ SMTP_URL: url, MAIL_FROM: 'Leads <leads@empresa.example>', ...env }, false);
  return new SmtpMailer(config.mail, { tls: { rejectUnauthorized: false }, timeouts });
}

let server: TestServer;
let mailer: SmtpMailer | undefined;

beforeEach(() => {
  // The outcome lines (codes only) would fill the test output.
  jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
});

afterEach(async () => {
  jest.restoreAllMocks();
  mailer?.close();
  mailer = undefined;
  await server?.close();
});

describe('SmtpMailer, against a real SMTP server', () => {
  it('delivers the message as composed: addresses, subject, both parts, Message-ID and the extra headers', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url);
    expect(mailer.destination).toBe(server.url);

    const result = await mailer.send(mail());

    expect(result).toEqual({ kind: 'accepted', code: 250, response: expect.stringMatching(/^250\b/) });
    expect(server.received).toHaveLength(1);
    const parsed = await simpleParser(server.received[0].raw);
    expect({
      from: parsed.from?.value,
      to: parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : undefined,
      replyTo: parsed.replyTo?.value,
      subject: parsed.subject,
      text: parsed.text?.trim(),
      html: parsed.html,
      messageId: parsed.messageId,
      autoSubmitted: parsed.headers.get('auto-submitted'),
    }).toEqual({
      from: [{ address: 'leads@empresa.example', name: 'Leads' }],
      to: [{ address: 'time@empresa.example', name: '' }],
      replyTo: [{ address: 'beatriz@cliente.example', name: '' }],
      subject: 'Novo lead: Beatriz Lima (site)',
      text: 'Nome: Beatriz Lima',
      html: '<p>Nome: Beatriz Lima</p>',
      messageId: '<msg-1.rcpt-1@empresa.example>',
      autoSubmitted: 'auto-generated',
    });
    // mailparser folds the List-* headers into one structure: read them as sent.
    const headerLines = server.received[0].raw.toString().split('\r\n\r\n')[0].split('\r\n');
    expect(headerLines).toEqual(
      expect.arrayContaining(['List-Unsubscribe: <https://leads.empresa.example/unsubscribe/tok>', 'List-Unsubscribe-Post: List-Unsubscribe=One-Click']),
    );
  });

  it('takes a Reply-To or a subject with line breaks as one address and one line: no header of the sender’s choosing', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url);

    const result = await mailer.send(mail({ subject: 'Novo lead\r\nBcc: victim@else.example', replyTo: 'a@b.example, evil@else.example' }));

    expect(result.kind).toBe('accepted');
    const parsed = await simpleParser(server.received[0].raw);
    expect([parsed.subject, parsed.bcc, parsed.headers.has('bcc')]).toEqual(['Novo lead Bcc: victim@else.example', undefined, false]);
    expect(parsed.replyTo?.value).toHaveLength(1);
  });

  it('a 451 for the recipient is transient, with the code and no address in what it says', async () => {
    server = await startSmtp();
    server.rcptReplies.set('time@empresa.example', { code: 451, message: '4.7.1 <time@empresa.example>: greylisted, try again later' });
    mailer = mailerFor(server.url);

    const result = await mailer.send(mail());

    expect(result).toEqual({ kind: 'transient', code: 451, response: expect.stringContaining('greylisted'), error: 'EENVELOPE at RCPT TO: 451' });
    expect(JSON.stringify(result)).not.toContain('time@empresa.example');
    expect(server.received).toHaveLength(0);
  });

  it('a 550 for the recipient is permanent', async () => {
    server = await startSmtp();
    server.rcptReplies.set('time@empresa.example', { code: 550, message: '5.1.1 <time@empresa.example>: no such user' });
    mailer = mailerFor(server.url);

    const result = await mailer.send(mail());

    expect(result).toEqual({ kind: 'permanent', code: 550, response: '550 5.1.1 <address> no such user', error: 'EENVELOPE at RCPT TO: 550' });
  });

  it('a 5xx to the message itself (DATA: refused as spam) is permanent', async () => {
    server = await startSmtp({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback(Object.assign(new Error('5.7.1 Message rejected as spam'), { responseCode: 554 })));
      },
    });
    mailer = mailerFor(server.url);

    const result = await mailer.send(mail());

    expect(result).toEqual({ kind: 'permanent', code: 554, response: '554 5.7.1 Message rejected as spam', error: 'EMESSAGE at DATA: 554' });
  });

  it('a 421 at the greeting (the server is busy) is transient', async () => {
    server = await startSmtp({
      onConnect(_session, callback) {
        callback(Object.assign(new Error('Too many connections, try later'), { responseCode: 421 }));
      },
    });
    mailer = mailerFor(server.url);

    const result = await mailer.send(mail());

    expect([result.kind, result.code]).toEqual(['transient', 421]);
  });

  it('speaks TLS from the first byte with smtps://', async () => {
    server = await startSmtp({ secure: true });
    mailer = mailerFor(server.url.replace('smtp:', 'smtps:'));
    expect(mailer.destination).toBe(server.url.replace('smtp:', 'smtps:'));

    expect((await mailer.send(mail())).kind).toBe('accepted');
    expect(server.received.map((message) => message.secure)).toEqual([true]);
  });

  it('a 5xx to our credentials is not the recipient’s fault: transient, never permanent', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url.replace('//', '//leads:wrong@'));
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

    const result = await mailer.send(mail());

    expect([result.kind, result.code]).toEqual(['transient', 535]);
    expect(server.received).toHaveLength(0);
    // The operator is told, by code only.
    expect(JSON.stringify(errors.mock.calls)).not.toMatch(/empresa\.example|cliente\.example|Beatriz/);
    expect(errors).toHaveBeenCalledTimes(1);
  });

  it('signs in with the credentials of the URL (percent-decoded) or of SMTP_USER and SMTP_PASSWORD', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url.replace('//', `//leads:${encodeURIComponent('p@ss:word/1')}@`));
    expect(mailer.destination).toBe(server.url);
    expect((await mailer.send(mail())).kind).toBe('accepted');
    mailer.close();
    mailer = mailerFor(server.url, { SMTP_USER: 'leads', SMTP_PASSWORD: 'p@ss:word/1' });
    expect((await mailer.send(mail())).kind).toBe('accepted');
    expect(server.received.map((message) => message.user)).toEqual(['leads', 'leads']);
  });

  it('a header name a caller got wrong is its bug: thrown, not a result to retry', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url);
    await expect(mailer.send(mail({ headers: { 'X-Bad: y\r\nBcc': 'x' } }))).rejects.toThrow('invalid header name');
    expect(server.received).toHaveLength(0);
  });

  it('no server listening is transient', async () => {
    server = await startSmtp();
    const url = server.url;
    await server.close();
    mailer = mailerFor(url);

    const result = await mailer.send(mail());

    expect(result).toEqual({ kind: 'transient', code: null, response: null, error: 'ESOCKET ECONNREFUSED at CONN' });
  });

  it('keeps one pooled connection for messages sent one after another', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url);
    for (const id of ['m1', 'm2', 'm3']) expect((await mailer.send(mail({ messageId: `${id}@empresa.example` }))).kind).toBe('accepted');
    expect([server.received.length, server.connections]).toEqual([3, 1]);
  });

  it('a server that accepts the connection and never speaks is transient once the greeting timeout passes', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    server = { url: '', received: [], rcptReplies: new Map(), connections: 0, close: () => new Promise((resolve) => silent.close(() => resolve())) };
    mailer = mailerFor(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, {}, { greetingTimeout: 200 });

    const result = await mailer.send(mail());

    sockets.forEach((socket) => socket.destroy());
    expect(result).toEqual({ kind: 'transient', code: null, response: null, error: 'ETIMEDOUT at CONN' });
  });

  it('upgrades with STARTTLS when the server offers it', async () => {
    server = await startSmtp();
    mailer = mailerFor(server.url);
    expect((await mailer.send(mail())).kind).toBe('accepted');
    expect(server.received.map((message) => message.secure)).toEqual([true]);
  });

  it('sends in plaintext to a server without STARTTLS, unless SMTP_REQUIRE_TLS: then nothing is sent, and it is transient', async () => {
    server = await startSmtp({ disabledCommands: ['STARTTLS'] });
    mailer = mailerFor(server.url);
    expect((await mailer.send(mail())).kind).toBe('accepted');
    expect(server.received.map((message) => message.secure)).toEqual([false]);
    mailer.close();

    mailer = mailerFor(server.url, { SMTP_REQUIRE_TLS: 'true' });
    const result = await mailer.send(mail());

    expect(result.kind).toBe('transient');
    expect(server.received).toHaveLength(1);
  });

  it('signs with DKIM: h= covers List-Unsubscribe and List-Unsubscribe-Post, and the signature verifies against the published key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const published = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
    server = await startSmtp();
    mailer = mailerFor(server.url, { DKIM_DOMAIN: 'empresa.example', DKIM_SELECTOR: 'leads2026', DKIM_PRIVATE_KEY: pem });

    // Words of both languages: the signature covers the encoded header and the body as sent.
    expect((await mailer.send(mail({ subject: 'Novo lead: João Araújo (site)', text: 'Olá, ação!', html: '<p>Olá, ação!</p>' }))).kind).toBe('accepted');

    const raw = server.received[0].raw;
    expect((await simpleParser(raw)).subject).toBe('Novo lead: João Araújo (site)');
    const lookups: string[] = [];
    const resolver = (name: string, type: string) => {
      lookups.push(`${type} ${name}`);
      if (type === 'TXT' && name === 'leads2026._domainkey.empresa.example') return Promise.resolve([[published]]);
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    };
    const { results } = await dkimVerify(raw, { resolver });
    expect(results.map((result) => [result.signingDomain, result.selector, result.status.result])).toEqual([['empresa.example', 'leads2026', 'pass']]);
    expect(lookups).toContain('TXT leads2026._domainkey.empresa.example');
    const signature = (await simpleParser(raw)).headers.get('dkim-signature') as { params: Record<string, string> };
    const signed = signature.params.h.toLowerCase().split(':');
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post', 'from', 'subject', 'reply-to']));

    // A changed List-Unsubscribe-Post breaks the signature: the one-click header cannot be added or altered on the way.
    const tampered = Buffer.from(raw.toString('latin1').replace('List-Unsubscribe=One-Click', 'List-Unsubscribe=Two-Clicks'), 'latin1');
    const again = await dkimVerify(tampered, { resolver });
    expect(again.results[0].status.result).toBe('fail');
  });
});
