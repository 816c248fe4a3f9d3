import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { maskAddress, parsePrivacyRequest, parseVerification, PrivacyRequestType } from '../data-subject/data-subject-request.js';
import { DataSubjectRequestsStore, SelfServiceRequest, UnfinishedType } from '../data-subject/data-subject-requests.store.js';
import { AccessPage, DataSubjectService, ErasureReceipt, RevocationReceipt } from '../data-subject/data-subject.service.js';
import { isCanonicalUuid, uuidv7 } from '../database/uuid-v7.js';
import { languageOf } from '../docs/person-page.js';
import { foldEmail } from '../leads/lead-rules.js';
import { LeadExportService } from '../leads/lead-export.service.js';
import { LeadExportQuery } from '../leads/lead-export.query.js';
import { safeError } from '../logging/safe-error.js';
import { NotificationRecipientsStore } from '../notifications/notification-recipients.store.js';
import { AppError, serviceUnavailable } from '../problem/app-error.js';
import { clientIp } from '../request/client-ip.js';
import { CaptchaVerifier } from '../screening/captcha-verifier.js';
import { captchaEvidenceOf } from '../screening/lead-evidence.js';
import { SecretBox } from '../secrets/secret-box.js';
import { PeriodicJob } from '../time/periodic-job.js';
import { CODE_LIFETIME_MS, codesRefused, VerificationService } from '../verification/verification.service.js';
import { LEAD_DATA_EVENTS } from '../webhooks/webhook-events.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { PrivacyDataQuery } from './privacy-data.query.js';
import { DataRecipient, PrivacySummary, SummaryTally } from './privacy-summary.js';

/** The verification purpose of a person's own request: a sign-in code cannot verify one, nor the reverse. */
const PURPOSE = 'privacy_request';
/** How long the download token of an access request reads the pages and the CSV. */
export const DOWNLOAD_LIFETIME_MS = 3_600_000;
/** Notification recipients read for the summary's list of who received data, at most. */
const RECIPIENTS_MAX = 200;
/**
 * How long an instance that took up a verified erasure or revocation (its verification, or a resume) has to finish it
 * before another takes it up (resume): far beyond one person's erasure, and the wait before a failing one is tried again.
 */
export const RESUME_AFTER_MS = 5 * 60_000;
/** How often each instance looks for such requests, after the look at start. */
const RESUME_INTERVAL_MS = 60_000;

export interface PrivacyRequestReceipt {
  id: string;
  status: 'identity_unverified';
  expires_at: string;
}

export type AccessResult = Omit<AccessPage, 'request_id' | 'type' | 'requested_at' | 'completed_at' | 'lead_ids' | 'counts'> & {
  id: string;
  type: 'access';
  status: 'completed';
  completed_at: string;
  summary: PrivacySummary;
  download_token: string;
  download_expires_at: string;
};

export interface ErasureResult {
  id: string;
  type: 'erasure';
  status: 'completed';
  completed_at: string;
  counts: ErasureReceipt['counts'];
  endpoints_notified: number;
}

export interface RevocationResult {
  id: string;
  type: 'consent_revocation';
  status: 'completed';
  completed_at: string;
  counts: RevocationReceipt['counts'];
  revoked_at: string;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const sealContext = (id: string) => `privacy-request:${id}`;

/**
 * A person's own data-subject requests (issue 36; docs/decisions/0040-self-service-privacy-requests.md): a request,
 * a code sent to its address (the verification service, the same for every address: the answer says nothing of what
 * we hold), and once the code is right, the request carried out through the operators' paths (DataSubjectService),
 * recorded in its own row of the one table of requests.
 */
@Injectable()
export class PrivacyRequestsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly captchaRequired: boolean;
  private readonly logger = new Logger('PrivacyRequests');
  private readonly resumer = new PeriodicJob<string[]>(RESUME_INTERVAL_MS, (error) =>
    this.logger.warn({ error: safeError(error) }, 'Carrying out unfinished privacy requests failed; retrying at the next look'),
  );

  constructor(
    private readonly requests: DataSubjectRequestsStore,
    private readonly dataSubject: DataSubjectService,
    private readonly verifications: VerificationService,
    private readonly box: SecretBox,
    private readonly captcha: CaptchaVerifier,
    private readonly exports: LeadExportService,
    private readonly webhooks: WebhooksService,
    private readonly recipients: NotificationRecipientsStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.captchaRequired = config.captcha !== null;
  }

  onApplicationBootstrap(): void {
    this.resumer.start(() => this.resumer.once(() => this.resume()));
  }

  onModuleDestroy(): Promise<void> {
    return this.resumer.stop();
  }

  /**
   * Carries out the erasures and revocations that were verified, are not done, and that no instance took up in the
   * RESUME_AFTER_MS before `now` (the instance that verified one stopped, or the database failed it half-way): a
   * verified request is the person's instruction, and is never left undone. Each is taken up first (so that two
   * instances never run one), and one that fails is tried again RESUME_AFTER_MS later without holding up the others.
   * Returns the ids it carried out.
   */
  async resume(now = Date.now()): Promise<string[]> {
    const claimedBefore = now - RESUME_AFTER_MS;
    const done: string[] = [];
    for (const request of await this.requests.unfinished(claimedBefore, 20)) {
      if (this.resumer.stopping) break;
      if (!(await this.requests.claim(request.id, now, claimedBefore))) continue;
      try {
        await this.carryOut(request.id, request.type, foldEmail(this.box.open(request.addressSealed, sealContext(request.id))));
        this.logger.log({ request_id: request.id, type: request.type }, 'Carried out a privacy request whose first run did not finish');
        done.push(request.id);
      } catch (error) {
        this.logger.warn(
          { request_id: request.id, type: request.type, error: safeError(error) },
          'A privacy request could not be carried out; trying again later',
        );
      }
    }
    return done;
  }

  /** `captchaToken`: the page's widget field; the API's callers send the Captcha-Token header. */
  async create(body: Record<string, unknown>, req: Request, captchaToken?: string): Promise<PrivacyRequestReceipt> {
    const request = parsePrivacyRequest(body);
    await this.passCaptcha(req, captchaToken);
    const now = Date.now();
    const id = uuidv7(now);
    const started = await this.verifications.start(
      {
        purpose: PURPOSE,
        address: request.address,
        subject: id,
        language: request.language ?? languageOf(req),
        clientIp: clientIp(req),
        about: request.type,
      },
      now,
    );
    if (!started.started) throw codesRefused(started.reason, now, 'nothing was sent');
    const expiresAt = now + CODE_LIFETIME_MS;
    await this.requests.insertSelfService({
      id,
      type: request.type,
      subjectHmac: await this.dataSubject.subjectHmac(request.email),
      requestedAt: now,
      expiresAt,
      addressMasked: maskAddress(request.email),
      addressSealed: this.box.seal(request.address, sealContext(id)),
      verificationId: started.id,
    });
    // Housekeeping where requests are made, so that no timer is needed.
    await this.requests.forgetAddresses(now, 100);
    return { id, status: 'identity_unverified', expires_at: new Date(expiresAt).toISOString() };
  }

  /** Spends a try of the request's code; a right one carries the request out and answers with its result. */
  async verify(id: string, body: Record<string, unknown>): Promise<AccessResult | ErasureResult | RevocationResult> {
    const code = parseVerification(body);
    const now = Date.now();
    const request = await this.open(id, now);
    const checked = await this.verifications.checkById(PURPOSE, request.verificationId, code, now);
    if (!checked.verified) {
      if (checked.usedMeanwhile) throw verifiedAlready();
      if (checked.triesLeft === 0) throw (await this.requests.lock(id)) ? locked() : verifiedAlready();
      throw new AppError('verification_code_invalid', `The code is not the one the e-mail gave; ${checked.triesLeft} tries left.`, {
        extensions: { tries_left: checked.triesLeft },
      });
    }
    if (!(await this.requests.markVerified(id, now))) throw verifiedAlready();
    const email = foldEmail(this.box.open(request.addressSealed!, sealContext(id)));
    const type = request.type as PrivacyRequestType;
    if (type !== 'access') return this.carryOut(id, type, email);
    const page = await this.dataSubject.accessPage(email, undefined, { clientId: null, requestId: id });
    const token = randomBytes(32).toString('base64url');
    const downloadExpiresAt = Date.now() + DOWNLOAD_LIFETIME_MS;
    await this.requests.setDownload(id, sha256(token), downloadExpiresAt);
    return {
      id,
      type,
      status: 'completed',
      completed_at: page.completed_at,
      summary: await this.summary(email, page),
      data: page.data,
      consent_texts: page.consent_texts,
      next_cursor: page.next_cursor,
      download_token: token,
      download_expires_at: new Date(downloadExpiresAt).toISOString(),
    };
  }

  /** An erasure or a revocation, through the operators' path, recorded in the request's row. */
  private async carryOut(id: string, type: UnfinishedType, email: string): Promise<ErasureResult | RevocationResult> {
    const requester = { clientId: null, requestId: id };
    if (type === 'erasure') {
      const receipt = await this.dataSubject.eraseAll(email, requester);
      return { id, type, status: 'completed', completed_at: receipt.completed_at, counts: receipt.counts, endpoints_notified: receipt.endpoints_notified };
    }
    const receipt = await this.dataSubject.revokeAll(email, requester);
    return { id, type, status: 'completed', completed_at: receipt.completed_at, counts: receipt.counts, revoked_at: receipt.revoked_at };
  }

  /**
   * A page of an access request's leads (`cursor` from the page before), or every lead as CSV (`format=csv`), read
   * with the download token of its verification, for an hour.
   */
  async data(id: string, query: PrivacyDataQuery, req: Request, res: Response): Promise<Omit<AccessPage, 'lead_ids' | 'counts'> | undefined> {
    const email = await this.downloader(id, req.headers.authorization);
    if (query.format === 'csv') {
      await this.csv(email, req, res, 'GET /api/v1/privacy/requests/{id}/data');
      return undefined;
    }
    const { lead_ids: _ids, counts: _counts, ...page } = await this.dataSubject.accessPage(email, query.cursor, { clientId: null, requestId: id }, false);
    return page;
  }

  /** Every lead of the request as one CSV file, for the page's download form (the token in the form, not a header). */
  async download(id: string, token: string | undefined, req: Request, res: Response): Promise<void> {
    await this.csv(await this.downloader(id, `Bearer ${token ?? ''}`), req, res, 'POST /privacy/requests/{id}/download');
  }

  /** The leads export of one address, every verdict: the same file an operator would get. */
  private csv(email: string, req: Request, res: Response, route: string): Promise<void> {
    return this.exports.export(Object.assign(new LeadExportQuery(), { email, screening: 'all' as const }), req, res, route);
  }

  /** The folded address a download token reads, or 401: no token, another request's, or past its hour. */
  private async downloader(id: string, authorization: string | undefined): Promise<string> {
    const refuse = () =>
      new AppError('download_token_invalid', 'The download token is missing, is not this request’s, or is past its hour.', {
        headers: { 'WWW-Authenticate': 'Bearer realm="privacy-request", error="invalid_token"' },
      });
    const token = /^Bearer ([\w-]{1,200})$/.exec(authorization ?? '')?.[1];
    const request = token && isCanonicalUuid(id) ? await this.requests.findSelfService(id) : undefined;
    if (!token || !request || request.downloadHash === null || request.addressSealed === null || (request.downloadExpiresAt ?? 0) <= Date.now()) throw refuse();
    if (!timingSafeEqual(Buffer.from(sha256(token), 'hex'), Buffer.from(request.downloadHash, 'hex'))) throw refuse();
    return foldEmail(this.box.open(request.addressSealed, sealContext(id)));
  }

  /** A request that may still be verified: unknown ids 404, a locked one 409, an expired one 410, a done one 409. */
  private async open(id: string, now: number): Promise<SelfServiceRequest> {
    const request = isCanonicalUuid(id) ? await this.requests.findSelfService(id) : undefined;
    if (!request) throw new AppError('privacy_request_not_found', 'No privacy request has this id.');
    if (request.status === 'locked') throw locked();
    if (request.status === 'verified' && request.type !== 'access' && request.addressSealed !== null) {
      throw new AppError('privacy_request_verified', 'This request was verified and is being carried out; it is done within minutes.');
    }
    if (request.status !== 'identity_unverified') throw verifiedAlready();
    if (request.expiresAt <= now || request.addressSealed === null) {
      throw new AppError('privacy_request_expired', 'The code of this request expired before it was entered; make the request again for a new code.');
    }
    return request;
  }

  private async passCaptcha(req: Request, token?: string): Promise<void> {
    if (!this.captchaRequired) return;
    const evidence = captchaEvidenceOf(req);
    evidence.captchaToken ??= token || undefined;
    if (evidence.captchaToken === undefined)
      throw new AppError('captcha_failed', 'This service asks for a captcha: send its token in the Captcha-Token header.');
    const outcome = await this.captcha.verify(evidence.captchaToken, evidence.remoteIp);
    if (outcome === 'captcha_unavailable') throw serviceUnavailable('The captcha provider did not answer; nothing was sent.');
    if (outcome !== 'ok') throw new AppError('captcha_failed', 'The captcha token was not accepted (wrong, expired or used); solve the captcha again.');
  }

  /** The simplified answer: every lead of the person tallied (the first page already read), and who received them. */
  private async summary(email: string, first: AccessPage): Promise<PrivacySummary> {
    const tally = new SummaryTally();
    tally.add(first.data);
    for (let cursor = first.next_cursor; cursor !== null;) {
      const page = await this.dataSubject.leadsOf(email, cursor);
      tally.add(page.data);
      cursor = page.nextCursor;
    }
    return tally.result(await this.recipientsOfData());
  }

  /**
   * Who is sent leads' personal data today: the enabled webhook endpoints that take leads, and the confirmed
   * notification recipients whose mail carries the lead's data.
   */
  private async recipientsOfData(): Promise<DataRecipient[]> {
    const endpoints = (await this.webhooks.list()).data
      .filter((endpoint) => endpoint.status === 'enabled' && endpoint.events.some((event) => LEAD_DATA_EVENTS.includes(event)))
      .map((endpoint): DataRecipient => ({ kind: 'webhook_endpoint', name: endpoint.description || new URL(endpoint.url).host }));
    const mailboxes = (await this.recipients.page(RECIPIENTS_MAX))
      .filter((recipient) => recipient.status === 'confirmed' && recipient.includePersonalData)
      .map((recipient): DataRecipient => ({ kind: 'notification_recipient', name: maskAddress(recipient.emailFolded) }));
    return [...endpoints, ...mailboxes];
  }
}

const locked = () =>
  new AppError('privacy_request_locked', 'Five wrong codes were entered for this request; it is closed. Make the request again for a new code.');
const verifiedAlready = () => new AppError('privacy_request_verified', 'This request was already verified and carried out; its answer was given then.');
