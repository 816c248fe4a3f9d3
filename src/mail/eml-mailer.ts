import { createHash, randomBytes } from 'node:crypto';
import { mkdir, opendir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type StreamTransport from 'nodemailer/lib/stream-transport/index.js';
import type { MailConfig } from '../config/config.js';
import { dkimOptions, messageOf } from './mail-message.js';
import type { Mailer, MailResult, OutgoingMail } from './mailer.js';

/** Files older than this are deleted: the folder is a developer's inbox, not an archive of people's data. */
export const EML_MAX_AGE_MS = 7 * 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;
/** Entries looked at between two turns of the event loop, and files deleted per prune (the next one goes on). */
const PRUNE_BATCH = 100;
const PRUNE_MAX_DELETIONS = 2_000;
/** Lead ids in a file name: past this many (a digest), they go in a `.leads` file beside it. */
const NAMED_LEADS_MAX = 4;
const LEAD_ID = /^[A-Za-z0-9-]{1,64}$/;
/** Leads erased lately: a delivery already under way when its lead was erased must not leave a file behind. */
const FORGOTTEN_MAX = 10_000;

/**
 * Without SMTP_URL: every message as an .eml file under DATA_DIR/mail/, the very bytes SMTP would carry (Nodemailer's
 * stream transport, with the same DKIM signature), so that a new user reads them with nothing installed. A file's name
 * carries the ids of the leads whose data it holds (`…_lead-<id>.eml`), so that an erasure finds and deletes it.
 */
export class EmlMailer implements Mailer {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter<StreamTransport.SentMessageInfo>;
  private timer?: NodeJS.Timeout;
  private pruning?: Promise<number>;
  private readonly forgotten = new Set<string>();

  constructor(
    private readonly config: MailConfig,
    readonly destination: string,
  ) {
    this.transport = createTransport({
      streamTransport: true,
      buffer: true,
      newline: 'windows',
      dkim: dkimOptions(config),
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  /** Warns in production, where nobody reads these files, and prunes now and every hour. */
  start(): void {
    if (this.config.production) {
      this.logger.warn({ destination: this.destination }, 'SMTP_URL is not set: e-mail is written to files, and nobody receives it');
    }
    const prune = () =>
      void this.prune().catch((error: unknown) => this.logger.warn({ code: (error as NodeJS.ErrnoException).code }, 'mail folder prune failed'));
    prune();
    this.timer = setInterval(prune, PRUNE_INTERVAL_MS).unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  async send(mail: OutgoingMail): Promise<MailResult> {
    const composed = messageOf(mail, this.config);
    try {
      const { message } = await this.transport.sendMail(composed);
      await mkdir(this.destination, { recursive: true });
      const leadIds = [...new Set(mail.leadIds ?? [])];
      const named = leadIds.length <= NAMED_LEADS_MAX && leadIds.every((id) => LEAD_ID.test(id));
      const base = `${fileStem(mail.messageId)}${named ? leadIds.map((id) => `_lead-${id}`).join('') : ''}`;
      if (!named) await this.writeAtomically(`${base}.leads`, `${leadIds.join('\n')}\n`);
      await this.writeAtomically(`${base}.eml`, message as Buffer);
      // Erased while this was being written: the erasure has scanned the folder already.
      if (leadIds.some((id) => this.forgotten.has(id))) await Promise.all([this.remove(`${base}.eml`), this.remove(`${base}.leads`)]);
      return { kind: 'accepted', code: null, response: null };
    } catch (error) {
      // A full disk or a read-only folder: retried like an SMTP server that does not answer.
      const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
      this.logger.warn({ code }, 'could not write a mail file');
      return { kind: 'transient', code: null, response: null, error: `file not written: ${code}` };
    }
  }

  async forgetLeads(leadIds: readonly string[]): Promise<number> {
    const wanted = new Set(leadIds);
    if (wanted.size === 0) return 0;
    for (const id of wanted) {
      this.forgotten.delete(id);
      this.forgotten.add(id);
    }
    // A Set iterates in insertion order: the oldest go first.
    for (const id of this.forgotten) {
      if (this.forgotten.size <= FORGOTTEN_MAX) break;
      this.forgotten.delete(id);
    }
    let deleted = 0;
    for await (const name of this.names()) {
      if (name.endsWith('.eml') && leadIdsInName(name).some((id) => wanted.has(id))) {
        deleted += await this.remove(name);
      } else if (name.endsWith('.leads')) {
        const listed = await readFile(join(this.destination, name), 'utf8').catch(() => '');
        if (listed.split('\n').some((id) => wanted.has(id))) {
          deleted += await this.remove(name.replace(/\.leads$/, '.eml'));
          await this.remove(name);
        }
      }
    }
    return deleted;
  }

  /** Deletes files older than EML_MAX_AGE_MS (and temporary files a crash left), at most PRUNE_MAX_DELETIONS a run. */
  prune(now = Date.now()): Promise<number> {
    this.pruning ??= this.pruneOnce(now).finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  private async pruneOnce(now: number): Promise<number> {
    let deleted = 0;
    for await (const name of this.names()) {
      const stats = await stat(join(this.destination, name)).catch(() => undefined);
      if (!stats?.isFile() || now - stats.mtimeMs <= EML_MAX_AGE_MS) continue;
      deleted += await this.remove(name);
      if (deleted >= PRUNE_MAX_DELETIONS) break;
    }
    return deleted;
  }

  /** The folder's entries, a batch at a time with a turn of the event loop between batches; none when it is missing. */
  private async *names(): AsyncGenerator<string> {
    let dir;
    try {
      dir = await opendir(this.destination, { bufferSize: PRUNE_BATCH });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let seen = 0;
    for await (const entry of dir) {
      if (!entry.isFile()) continue;
      yield entry.name;
      if (++seen % PRUNE_BATCH === 0) await nextTurn();
    }
  }

  private async remove(name: string): Promise<number> {
    try {
      await rm(join(this.destination, name));
      return 1;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
  }

  /** A reader sees the whole file or none: written under a temporary name, then renamed (a resend replaces it). */
  private async writeAtomically(name: string, content: string | Buffer): Promise<void> {
    const temporary = join(this.destination, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(temporary, content, { mode: 0o600, flush: true });
      await rename(temporary, join(this.destination, name));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}

/** The Message-ID as a file name: the same message (a resend) is the same file. */
function fileStem(messageId: string): string {
  const id = messageId.replace(/^<|>$/g, '');
  const local = id.split('@')[0];
  return /^[A-Za-z0-9._-]{1,120}$/.test(local) && !local.startsWith('.') ? local : createHash('sha256').update(id).digest('hex').slice(0, 32);
}

/** The lead ids an .eml file's name carries. */
export function leadIdsInName(name: string): string[] {
  return [...name.replace(/\.eml$/, '').matchAll(/_lead-([A-Za-z0-9-]+)/g)].map((match) => match[1]);
}
