import type { ConnectionOptions } from 'node:tls';
import { Logger } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { MailConfig } from '../config/config.js';
import { dkimOptions, messageOf } from './mail-message.js';
import { failureOf, redactedResponse, replyCode } from './mail-outcome.js';
import type { Mailer, MailResult, OutgoingMail } from './mailer.js';

/**
 * Bounds of one SMTP conversation, so that a server that stops answering holds a delivery for at most about a minute
 * (the outbox's lease is longer). Nodemailer's defaults wait up to 10 minutes for a silent socket.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 10_000 };

/** Where SMTP_URL sends mail, without its credentials: `smtp://host:port`. */
export function smtpDestination(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  return `${url.protocol}//${url.hostname}:${url.port || (secure ? 465 : 587)}`;
}

/** What tests change: their server's certificate (`tls.ca`, or no check), and shorter timeouts. */
export interface SmtpTestOptions {
  tls?: ConnectionOptions;
  timeouts?: Partial<typeof SMTP_TIMEOUTS>;
}

/** The pooled transport's options for SMTP_URL (STARTTLS whenever offered; SMTP_REQUIRE_TLS makes it mandatory). */
export function smtpTransportOptions(config: MailConfig, { tls, timeouts }: SmtpTestOptions = {}): SMTPPool.Options {
  const url = new URL(config.smtpUrl!);
  const secure = url.protocol === 'smtps:';
  const user = url.username ? decodeURIComponent(url.username) : config.smtpUser;
  const pass = url.username || url.password ? decodeURIComponent(url.password) : config.smtpPassword;
  return {
    pool: true,
    // Connections and messages per connection: a small pool serves a team's notifications; Nodemailer's defaults.
    maxConnections: 5,
    maxMessages: 100,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port) || (secure ? 465 : 587),
    secure,
    requireTLS: config.requireTls,
    auth: user ? { user, pass: pass ?? '' } : undefined,
    tls: { minVersion: 'TLSv1.2', ...tls },
    ...SMTP_TIMEOUTS,
    ...timeouts,
    dkim: dkimOptions(config),
    // Nodemailer's own log lines carry addresses and commands: never on.
    logger: false,
    debug: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** SMTP_URL's server, through one pooled transport for the whole process. */
export class SmtpMailer implements Mailer {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter<SMTPPool.SentMessageInfo>;
  readonly destination: string;

  constructor(
    private readonly config: MailConfig,
    testOptions?: SmtpTestOptions,
  ) {
    this.transport = createTransport(smtpTransportOptions(config, testOptions));
    // Each send's failure comes back to its caller; a transport-level error must not be an unhandled 'error' event.
    this.transport.on('error', (error: NodeJS.ErrnoException) => this.logger.warn({ code: error.code }, 'SMTP transport error'));
    this.destination = smtpDestination(config.smtpUrl!);
  }

  async send(mail: OutgoingMail): Promise<MailResult> {
    // A malformed message is the caller's bug and throws here; only what the server or the network did is a result.
    const message = messageOf(mail, this.config);
    try {
      const info = await this.transport.sendMail(message);
      return { kind: 'accepted', code: replyCode(info.response), response: redactedResponse(info.response) };
    } catch (error) {
      const result = failureOf(error);
      // Codes only: never the address, the subject or the body.
      if (/EAUTH|at MAIL FROM/.test(result.error))
        this.logger.error({ outcome: result.kind, error: result.error }, 'SMTP server refused our credentials or sender');
      else this.logger.debug({ outcome: result.kind, error: result.error }, 'mail not accepted');
      return result;
    }
  }

  /** Nothing is kept: what the server accepted is its own. */
  forgetLeads(): Promise<number> {
    return Promise.resolve(0);
  }

  close(): void {
    this.transport.close();
  }
}
