import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isCanonicalUuid, uuidv7 } from '../database/uuid-v7.js';
import { foldEmail } from '../leads/lead-rules.js';
import type { MailLanguage } from '../mail/mail-templates.js';
import { TokenResponse, TokenService } from '../oauth/token.service.js';
import { AppError, validationFailed } from '../problem/app-error.js';
import { SecretBox } from '../secrets/secret-box.js';
import { CODE_LIFETIME_MS, codesRefused, VerificationService } from '../verification/verification.service.js';
import { AgentClaimsStore, ClaimableRegistration, ClaimAttempt } from './agent-claims.store.js';
import { AgentRegistration } from './agent-registration.entity.js';
import { ClaimStart } from './identity-request.js';

/** The claim grant of the token endpoint (auth.md v0.4.0). */
export const CLAIM_GRANT = 'urn:workos:agent-auth:grant-type:claim';
/** The verification purpose of a claim's e-mailed code: no other code verifies it. */
const PURPOSE = 'agent_claim';
/** Seconds between two polls of one claim (RFC 8628 §3.2 `interval`). */
export const POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §6.1: 20 consonants, no vowels (no words), none that look alike; 8 of them, about 34 bits. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/;

export interface ClaimAttemptView {
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}

/** What the token endpoint answers once the owner confirmed: the access token, and the claimed identity's assertion. */
export interface ClaimedTokenResponse extends TokenResponse {
  identity_assertion: string;
  assertion_expires: string;
}

/** What a claim's page shows: when the registration was made (never its self-chosen name), and whether it is still open. */
export interface ClaimPageFacts {
  registeredAt: number;
  open: boolean;
}

export type ConfirmOutcome = 'confirmed' | 'wrong' | 'ended';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const sealContext = (id: string) => `agent-claim:${id}`;

/** The user code as typed: any case, spaces and dashes aside. */
export function normaliseUserCode(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const code = value.toUpperCase().replace(/[\s-]/g, '');
  return USER_CODE.test(code) ? code : undefined;
}

/**
 * The claim ceremony (issue 36; docs/decisions/0041-agent-claims.md). The agent starts it with its claim token and its
 * owner's address; the owner gets a code by e-mail (the verification service: 10 minutes, 5 tries, the limits per
 * address, per client and per day) and sees the user code on the agent; both are typed on the service's own page,
 * which confirms; the agent's next poll of the token endpoint redeems the claim: the registration is claimed for that
 * address, and its earlier tokens stop.
 */
@Injectable()
export class ClaimsService implements OnModuleInit {
  private readonly base: string;

  constructor(
    private readonly store: AgentClaimsStore,
    private readonly verifications: VerificationService,
    private readonly box: SecretBox,
    private readonly tokens: TokenService,
    @InjectRepository(AgentRegistration) private readonly registrations: Repository<AgentRegistration>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.base = config.publicBaseUrl;
  }

  onModuleInit(): void {
    this.tokens.registerGrant(CLAIM_GRANT, (params) => this.poll(params));
  }

  /** The absolute URL of the claim endpoint, for registration answers. */
  get claimUrl(): string {
    return `${this.base}/api/v1/agent/identity/claim`;
  }

  /** POST /api/v1/agent/identity/claim: a new attempt for the registration the claim token names. */
  async start(request: ClaimStart, clientIp: string, language: MailLanguage): Promise<{ status: 'initiated'; claim_attempt: ClaimAttemptView }> {
    const registration = await this.store.registrationByClaimToken(sha256(request.claimToken));
    const now = Date.now();
    if (!registration || registration.revoked || registration.claimTokenExpiresAt <= now) {
      throw new AppError('invalid_claim_token', 'The claim token is not one this service gave, has expired, or its registration was revoked.');
    }
    if (registration.claimedAt !== null) throw new AppError('registration_claimed', 'This registration is already claimed.');
    // An identity_assertion registration is claimed for the address it asserted: that is its login hint.
    const asserted = registration.type === 'identity_assertion' ? registration.email : null;
    if (asserted && request.loginHint && foldEmail(request.loginHint) !== foldEmail(asserted)) {
      throw validationFailed([
        { pointer: '/login_hint', code: 'invalid_value', detail: 'An identity_assertion registration is claimed for the address it asserted.' },
      ]);
    }
    const address = request.loginHint ?? asserted;
    if (!address) throw validationFailed([{ pointer: '/login_hint', code: 'required', detail: "login_hint is required: the owner's e-mail address." }]);
    return { status: 'initiated', claim_attempt: await this.begin(registration, address, clientIp, language, now) };
  }

  /** A new attempt for a registration (a claim's start, or a service_auth registration's own). */
  async begin(
    registration: Pick<ClaimableRegistration, 'id'>,
    address: string,
    clientIp: string,
    language: MailLanguage,
    now = Date.now(),
  ): Promise<ClaimAttemptView> {
    const id = uuidv7(now);
    const started = await this.verifications.start({ purpose: PURPOSE, address, subject: id, language, clientIp, about: 'agent_claim' }, now);
    if (!started.started) throw codesRefused(started.reason, now, 'no claim was started');
    const userCode = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');
    await this.store.insert({
      id,
      registrationId: registration.id,
      userCodeMac: this.userCodeMac(id, userCode),
      verificationId: started.id,
      addressSealed: this.box.seal(address, sealContext(id)),
      createdAt: now,
      expiresAt: now + CODE_LIFETIME_MS,
    });
    return {
      user_code: `${userCode.slice(0, 4)}-${userCode.slice(4)}`,
      verification_uri: `${this.base}/claim/${id}`,
      expires_in: CODE_LIFETIME_MS / 1000,
      interval: POLL_INTERVAL_SECONDS,
    };
  }

  /** What the page of an attempt shows; undefined for an id that is no attempt. */
  async facts(id: string): Promise<ClaimPageFacts | undefined> {
    const attempt = isCanonicalUuid(id) ? await this.store.attempt(id) : undefined;
    const registration = attempt && (await this.store.registrationOf(attempt.registrationId));
    if (!attempt || !registration) return undefined;
    return { registeredAt: registration.createdAt, open: attempt.status === 'pending' && attempt.expiresAt > Date.now() };
  }

  /**
   * The owner's confirmation on the page: both codes right, within the attempt's 10 minutes. Every wrong pair spends
   * one of the e-mailed code's 5 tries, a wrong user code too; the fifth ends the attempt.
   */
  async confirm(id: string, userCode: unknown, emailCode: unknown): Promise<{ outcome: ConfirmOutcome; triesLeft: number }> {
    const attempt = isCanonicalUuid(id) ? await this.store.attempt(id) : undefined;
    const now = Date.now();
    if (!attempt || attempt.status !== 'pending' || attempt.expiresAt <= now) return { outcome: 'ended', triesLeft: 0 };
    const typed = normaliseUserCode(userCode);
    const userCodeRight = typed !== undefined && timingSafeEqual(Buffer.from(this.userCodeMac(id, typed), 'hex'), Buffer.from(attempt.userCodeMac, 'hex'));
    // A wrong user code is tried with a code that cannot be right, so that it spends a try all the same.
    const checked = await this.verifications.checkById(PURPOSE, attempt.verificationId, userCodeRight ? emailCode : '', now);
    if (checked.verified && (await this.store.confirm(id, now))) return { outcome: 'confirmed', triesLeft: 0 };
    if (!checked.verified && checked.triesLeft > 0) return { outcome: 'wrong', triesLeft: checked.triesLeft };
    await this.store.fail(id);
    // A right pair posted at the same moment (a double click) may have won: then this one is its confirmation too.
    return { outcome: (await this.store.attempt(id))?.status === 'confirmed' ? 'confirmed' : 'ended', triesLeft: 0 };
  }

  /**
   * The claim grant: `authorization_pending` until the owner confirms, `slow_down` when two polls of one claim come
   * closer than the interval, `expired_token` after it, `access_denied` when it ended on wrong codes; then, once, the
   * access token and the claimed identity's assertion.
   */
  private async poll(params: Record<string, string>): Promise<ClaimedTokenResponse> {
    if (!params.claim_token) throw new AppError('invalid_request', 'claim_token is required.');
    const invalid = () => new AppError('invalid_grant', 'The claim token is not valid for a claim of this service.');
    const registration = params.claim_token.length <= 200 ? await this.store.registrationByClaimToken(sha256(params.claim_token)) : undefined;
    if (!registration || registration.revoked) throw invalid();
    const attempt = await this.store.latest(registration.id);
    if (!attempt || attempt.status === 'redeemed' || attempt.status === 'superseded') throw invalid();
    const now = Date.now();
    if (attempt.status === 'failed') throw new AppError('access_denied', 'The claim ended: five wrong codes were entered on its page. Start a new one.');
    if (attempt.status === 'pending' && attempt.expiresAt <= now)
      throw new AppError('expired_token', 'The claim attempt expired before its owner confirmed it. Start a new one.');
    if (!(await this.store.poll(attempt.id, now, POLL_INTERVAL_SECONDS * 1000))) {
      throw new AppError('slow_down', `Poll at most once every ${POLL_INTERVAL_SECONDS} seconds.`);
    }
    if (attempt.status === 'pending') throw new AppError('authorization_pending', 'The owner has not confirmed the claim yet; poll again after the interval.');
    return this.redeem(attempt, now);
  }

  private async redeem(attempt: ClaimAttempt, now: number): Promise<ClaimedTokenResponse> {
    const address = this.box.open(attempt.addressSealed!, sealContext(attempt.id));
    if (!(await this.store.redeem(attempt, address, now))) throw new AppError('invalid_grant', 'The claim token is not valid for a claim of this service.');
    const registration = await this.registrations.findOneByOrFail({ id: attempt.registrationId });
    const token = await this.tokens.agentAccessToken(registration);
    const { assertion, expiresAt } = await this.tokens.signAssertion(registration);
    return { ...token, identity_assertion: assertion, assertion_expires: expiresAt.toISOString() };
  }

  private userCodeMac(id: string, code: string): string {
    return this.box.mac(`${id}:${code}`, 'agent-claim-user-code').toString('hex');
  }
}
