import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Step, Steps } from '../database/step-transaction.js';
import { MAIL_TEMPLATES, type MailTemplates } from '../mail/mail-templates.js';
import { MAILER, type Mailer } from '../mail/mailer.js';
import type { AttemptOutcome, Channel, ClaimedDelivery, Subscriber, Subscription } from '../outbox/channel.js';
import { scrub } from '../notifications/email-channel.js';
import { CODE_LIFETIME_MS, VerificationService } from './verification.service.js';
import { type PendingMail, VerificationStore } from './verification.store.js';

/** Retries within the code's 10 minutes: a code that arrives later is no use. */
const RETRY_SCHEDULE = [5_000, 20_000, 60_000, 120_000, 240_000];
const ATTEMPT_TIMEOUT_MS = 60_000;

export interface VerificationSubscriber extends Subscriber {
  pending: PendingMail;
}

const nothing = (error: string) => ({ statusCode: null, error, latencyMs: null, responseBody: null });

/**
 * The verification codes' e-mail, as an outbox channel beside the notifications' (docs/decisions/0038-verification-codes.md):
 * each verification is the one subscriber of its one message, so the outbox's lease, retries and attempt log serve it
 * as they serve every channel. The mail's words are the templates' (`verification`), the address and code are opened
 * from their sealed form at the attempt, and the sealed form is emptied once the mail is accepted or will never be sent.
 */
@Injectable()
export class VerificationMailChannel implements Channel<VerificationSubscriber> {
  readonly name = 'verification_email';
  readonly subscribers = { table: 'verification_codes', enabled: (alias: string) => `${alias}.mail_sealed IS NOT NULL` };
  readonly retrySchedule = RETRY_SCHEDULE;
  readonly attemptTimeoutMs = ATTEMPT_TIMEOUT_MS;
  readonly disableAfterMs = CODE_LIFETIME_MS;
  readonly disableAfterSetting = 'the code lifetime (10 minutes)';
  readonly subscriberConcurrency = 1;
  readonly aimedOnly = true;
  private readonly fromDomain: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(MAIL_TEMPLATES) private readonly templates: MailTemplates,
    private readonly store: VerificationStore,
    private readonly verifications: VerificationService,
  ) {
    const from = /<([^<>]*)>\s*$/.exec(config.mail.from)?.[1] ?? config.mail.from;
    this.fromDomain = from.slice(from.lastIndexOf('@') + 1);
  }

  subscriptions(): Steps<Subscription[]> {
    return this.store.pendingMails();
  }

  /** Never counted as a subscriber of lead messages: the SQLite shortcut of the outbox is about leads. */
  hasSubscribers(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async load(ids: readonly string[]): Promise<Map<string, VerificationSubscriber>> {
    const rows = await this.store.load(ids);
    return new Map(rows.map((pending) => [pending.id, { id: pending.id, enabled: pending.mailSealed !== null, failingSince: pending.failingSince, pending }]));
  }

  async attempt(delivery: ClaimedDelivery & { payload: string }, subscriber: VerificationSubscriber): Promise<AttemptOutcome> {
    const { pending } = subscriber;
    if (pending.mailSealed === null) return { kind: 'succeeded', ...nothing('nothing_to_send') };
    const mail = this.verifications.openMail(pending.id, pending.mailSealed);
    if (!mail.send) {
      await this.store.scrub(pending.id);
      return { kind: 'succeeded', ...nothing('nothing_to_send') };
    }
    if (pending.usedAt !== null || pending.expiresAt <= Date.now()) {
      await this.store.scrub(pending.id);
      return { kind: 'failed', ...nothing('code_ended') };
    }
    const minutes = CODE_LIFETIME_MS / 60_000;
    const words =
      mail.about === 'agent_claim'
        ? this.templates.claimCode(mail.language, { code: mail.code, minutes })
        : mail.about
          ? this.templates.privacyCode(mail.language, { code: mail.code, minutes, request: mail.about })
          : this.templates.verification(mail.language, { code: mail.code, minutes });
    const started = performance.now();
    const result = await this.mailer.send({
      ...words,
      to: mail.address,
      messageId: `${delivery.messageId}@${this.fromDomain}`,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    const latencyMs = Math.round(performance.now() - started);
    const reply = result.response === null ? null : scrub(result.response);
    if (result.kind === 'accepted') {
      await this.store.scrub(pending.id);
      return { kind: 'succeeded', statusCode: result.code, error: null, latencyMs, responseBody: reply };
    }
    if (result.kind === 'transient') return { kind: 'retry', statusCode: result.code, error: scrub(result.error), latencyMs, responseBody: reply };
    await this.store.scrub(pending.id);
    return { kind: 'failed', statusCode: result.code, error: scrub(result.error), latencyMs, responseBody: reply };
  }

  failing(id: string, now: number): Step {
    return this.store.failing(id, now);
  }

  recovered(id: string): Step {
    return this.store.recovered(id);
  }

  disable(id: string): Step {
    return this.store.disable(id);
  }
}
