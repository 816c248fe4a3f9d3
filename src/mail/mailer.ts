/**
 * The one way the service sends e-mail (docs/decisions/0035-email-notifications.md): an SMTP transport when SMTP_URL
 * is set, otherwise .eml files under DATA_DIR/mail/. Channels (src/notifications/) build the message; the mailer sends
 * it and says how it went, never throwing for an answer of the server.
 */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Without angle brackets; the same for a resend of the same message, so that a resend is the same message. */
  messageId: string;
  replyTo?: string;
  /** Extra headers (List-Unsubscribe, List-Unsubscribe-Post, Auto-Submitted…); DKIM covers them when configured. */
  headers?: Record<string, string>;
  /** The leads whose data it carries: an erasure deletes their .eml files. */
  leadIds?: readonly string[];
}

/**
 * accepted: the server took it (or the file was written); transient: a 4xx or no connection, to be retried;
 * permanent: a 5xx for this recipient, not to be retried. `code` is the SMTP reply code when there was one;
 * `response` is the server's reply (never the message).
 */
export type MailResult =
  | { kind: 'accepted'; code: number | null; response: string | null }
  | { kind: 'transient' | 'permanent'; code: number | null; response: string | null; error: string };

export interface Mailer {
  send(mail: OutgoingMail): Promise<MailResult>;
  /** Deletes the .eml files that carry these leads (an erasure); returns how many. SMTP: nothing kept, 0. */
  forgetLeads(leadIds: readonly string[]): Promise<number>;
  /** Where messages go, for the start line: `smtp://host:port` (no credentials) or the .eml folder. */
  readonly destination: string;
}

export const MAILER = Symbol('MAILER');
