import type { MailResult } from './mailer.js';

const RESPONSE_MAX = 300;

/** The server's reply on one line and bounded, any word with an @ in it (an address, in any quoting) replaced. */
export function redactedResponse(response: unknown): string | null {
  if (typeof response !== 'string' || response === '') return null;
  const words = response
    .slice(0, 4 * RESPONSE_MAX)
    .split(/\s+/)
    .filter(Boolean);
  return words
    .map((word) => (word.includes('@') ? '<address>' : word))
    .join(' ')
    .slice(0, RESPONSE_MAX);
}

/** The SMTP code that opens a reply (`250 2.0.0 OK` → 250). */
export function replyCode(response: unknown): number | null {
  const match = typeof response === 'string' ? /^([2-5]\d\d)\b/.exec(response) : null;
  return match ? Number(match[1]) : null;
}

/** The stage of the transaction whose 5xx says the recipient, or this message to this recipient, is refused for good. */
const RECIPIENT_STAGES = new Set(['RCPT TO', 'DATA']);

interface NodemailerError {
  code?: string;
  originalCode?: string;
  command?: string;
  responseCode?: number;
  response?: string;
}

/**
 * How a failed send went. A 5xx for the recipient (its RCPT TO or the message's DATA) is permanent. Everything else
 * is transient and retried on EMAIL_RETRY_SCHEDULE: a 4xx, no connection, a timeout, a TLS failure (SMTP_REQUIRE_TLS
 * with a server that offers no STARTTLS), and also a 5xx that is about us rather than the recipient (our credentials,
 * our sender address): that fault is fixed by the operator, and must not mark the team's addresses as bouncing.
 */
export function failureOf(error: unknown): Extract<MailResult, { kind: 'transient' | 'permanent' }> {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as NodemailerError;
  const code = typeof failure.responseCode === 'number' ? failure.responseCode : replyCode(failure.response);
  const response = redactedResponse(failure.response);
  // Codes only: Nodemailer's messages may quote the address ("Message failed for recipient …").
  const what = [failure.code ?? 'ERROR', failure.originalCode, failure.command && `at ${failure.command}`].filter(Boolean).join(' ');
  const permanent = code !== null && code >= 500 && RECIPIENT_STAGES.has(failure.command ?? '');
  return { kind: permanent ? 'permanent' : 'transient', code, response, error: code === null ? what : `${what}: ${code}` };
}

/**
 * A permanent failure that refuses this message's content, not the recipient: a 5xx to DATA whose enhanced code
 * (RFC 3463) is of the mail system (5.3.x, its size), the media (5.6.x) or security and policy (5.7.x: a spam or virus
 * filter). The content is a lead's, which anyone can write: it says nothing about the address.
 */
export function refusesContent(result: MailResult): boolean {
  return result.kind === 'permanent' && /\bat DATA\b/.test(result.error) && /^5\d\d[ -]5\.[367]\./.test(result.response ?? '');
}
