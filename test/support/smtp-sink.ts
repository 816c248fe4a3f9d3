import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** What the sink answers a recipient (RCPT TO): accept, or an SMTP error with this code. */
export type RcptAnswer = 'accept' | { code: number; message: string };

/** A message the sink took: its envelope and the parsed message (headers, text and HTML parts). */
export interface SunkMail {
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

/**
 * A real SMTP server in the test (smtp-server), plain on a free loopback port, that parses what it accepts with
 * mailparser. `answer` decides per recipient address, so a test can refuse one with 451 once or 550 for good.
 */
export class SmtpSink {
  readonly messages: SunkMail[] = [];
  /** Per folded recipient address: what to answer its next RCPT TO (shifted each time; the last one stays). */
  private readonly answers = new Map<string, RcptAnswer[]>();

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<SmtpSink> {
    // The server's handlers need the sink, which needs the server's port.
    const holder: { sink?: SmtpSink } = {};
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (address: SMTPServerAddress, _session, callback) => {
        const answer = holder.sink!.next(address.address);
        if (answer === 'accept') return callback();
        return callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (parsed) => {
              holder.sink!.messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, parsed });
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
    // A client killed in the middle of a transaction (the kill -9 suites) resets its socket; smtp-server emits that as
    // 'error', which without a listener would throw in the test process. The message is simply not taken.
    server.on('error', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sink = new SmtpSink(server, ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port);
    holder.sink = sink;
    return sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** What to answer this address's next RCPT TOs, in order; the last one stays. */
  answer(address: string, ...answers: RcptAnswer[]): void {
    this.answers.set(address.toLowerCase(), answers);
  }

  /** The messages sent to this address (letter case ignored). */
  to(address: string): SunkMail[] {
    return this.messages.filter((mail) => mail.to.some((to) => to.toLowerCase() === address.toLowerCase()));
  }

  private next(address: string): RcptAnswer {
    const queue = this.answers.get(address.toLowerCase());
    if (!queue?.length) return 'accept';
    return queue.length > 1 ? queue.shift()! : queue[0];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
