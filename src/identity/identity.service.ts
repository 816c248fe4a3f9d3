import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AGENT_SCOPES } from '../auth/scopes.js';
import { EntityInsert, InsertStatement, runInOneTransaction } from '../database/insert-transaction.js';
import { TokenService } from '../oauth/token.service.js';
import { AgentRegistrationAddress } from './agent-registration-address.entity.js';
import { AgentRegistration, RegistrationType } from './agent-registration.entity.js';
import type { MailLanguage } from '../mail/mail-templates.js';
import { ClaimAttemptView, ClaimsService } from './claims.service.js';
import { parseClaimStart, parseIdentityRequest, RegistrationRequest } from './identity-request.js';
import { RefreshTokens } from './refresh-tokens.service.js';
import { registrationAddresses } from './registration-addresses.js';
import { expiryAfterIssue } from './registration-lifetime.js';

const CLAIM_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The answer of a refresh: the same registration, a new assertion, the next refresh token. */
export interface RefreshedIdentityResponse {
  registration_id: string;
  registration_type: RegistrationType;
  identity_assertion: string;
  assertion_expires: string;
  scopes: string[];
  refresh_token: string;
  refresh_token_expires: string;
}

/**
 * The answer of a registration: a refresh's members, the claim token shown this once, where to claim it and what a
 * claim changes; a service_auth registration's answer also carries the claim attempt it started.
 */
export interface IdentityResponse extends RefreshedIdentityResponse {
  claim_token: string;
  claim_token_expires: string;
  claim_url: string;
  pre_claim_scopes: string[];
  post_claim_scopes: string[];
  claim_attempt?: ClaimAttemptView;
}

@Injectable()
export class IdentityService {
  private readonly registrationInsert: EntityInsert<AgentRegistration>;
  private readonly addressInsert: EntityInsert<AgentRegistrationAddress>;
  private readonly insert: (statements: InsertStatement[]) => Promise<void>;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly tokens: TokenService,
    private readonly refreshTokens: RefreshTokens,
    private readonly claims: ClaimsService,
  ) {
    this.registrationInsert = new EntityInsert(dataSource, AgentRegistration);
    this.addressInsert = new EntityInsert(dataSource, AgentRegistrationAddress);
    this.insert = runInOneTransaction(dataSource);
  }

  /** A registration (anonymous, identity_assertion) or the refresh of one, as the body's `type` says. */
  async answer(body: Record<string, unknown>, registeredFrom: string, language: MailLanguage): Promise<IdentityResponse | RefreshedIdentityResponse> {
    const request = parseIdentityRequest(body);
    return request.type === 'refresh' ? this.refresh(request.refreshToken) : this.register(request, registeredFrom, language);
  }

  /** POST /api/v1/agent/identity/claim. */
  claim(body: Record<string, unknown>, clientIp: string, language: MailLanguage) {
    return this.claims.start(parseClaimStart(body), clientIp, language);
  }

  /**
   * Stores a registration, with the addresses it names in the erasure's index (one transaction), and answers with its
   * service-signed assertion; the claim token and the first refresh token are shown once, kept as hashes.
   */
  private async register(request: RegistrationRequest, registeredFrom: string, language: MailLanguage): Promise<IdentityResponse> {
    const now = new Date();
    const claimToken = `clm_${randomBytes(24).toString('base64url')}`;
    const claimTokenExpiresAt = new Date(now.getTime() + CLAIM_TOKEN_LIFETIME_MS);
    const refreshExpiresAt = this.refreshTokens.expiryOfIssuedAt(now);
    const registration: AgentRegistration = {
      id: `reg_${randomBytes(16).toString('base64url')}`,
      type: request.type,
      clientName: request.clientName ?? null,
      contacts: request.contacts ? JSON.stringify(request.contacts) : null,
      email: request.email ?? null,
      scopes: AGENT_SCOPES.join(' '),
      claimTokenHash: createHash('sha256').update(claimToken).digest('hex'),
      claimTokenExpiresAt,
      createdAt: now,
      revokedAt: null,
      expiresAt: new Date(Math.max(claimTokenExpiresAt.getTime(), expiryAfterIssue(now, refreshExpiresAt).getTime())),
      registeredFrom,
      claimedAt: null,
      verifiedEmail: null,
    };
    const addresses = registrationAddresses(request.contacts, request.email).map((emailFolded) => ({ registrationId: registration.id, emailFolded }));
    await this.insert([...this.registrationInsert.statements([registration]), ...(addresses.length ? this.addressInsert.statements(addresses) : [])]);
    // service_auth: the claim starts with the registration, for its login hint (the same limits as any claim's start).
    const claimAttempt = request.type === 'service_auth' ? await this.claims.begin(registration, request.email!, registeredFrom, language) : undefined;
    const refresh = await this.refreshTokens.issue(registration.id, now);
    const { assertion, expiresAt } = await this.tokens.signAssertion(registration);
    return {
      registration_id: registration.id,
      registration_type: registration.type,
      identity_assertion: assertion,
      assertion_expires: expiresAt.toISOString(),
      scopes: [...AGENT_SCOPES],
      claim_token: claimToken,
      claim_token_expires: registration.claimTokenExpiresAt.toISOString(),
      refresh_token: refresh.refreshToken,
      refresh_token_expires: refresh.expiresAt.toISOString(),
      claim_url: this.claims.claimUrl,
      // A claim changes who the registration is and its quota (verified_agent), not what it may do.
      pre_claim_scopes: [...AGENT_SCOPES],
      post_claim_scopes: [...AGENT_SCOPES],
      ...(claimAttempt ? { claim_attempt: claimAttempt } : {}),
    };
  }

  /**
   * The same registration, unchanged (its address included, so that it keeps counting toward that address's ceiling
   * while it lives), with a new assertion and the next refresh token.
   */
  private async refresh(refreshToken: string): Promise<RefreshedIdentityResponse> {
    const { registration, refreshToken: next, expiresAt: nextExpires } = await this.refreshTokens.rotate(refreshToken);
    const { assertion, expiresAt } = await this.tokens.signAssertion(registration);
    return {
      registration_id: registration.id,
      registration_type: registration.type,
      identity_assertion: assertion,
      assertion_expires: expiresAt.toISOString(),
      scopes: [...AGENT_SCOPES],
      refresh_token: next,
      refresh_token_expires: nextExpires.toISOString(),
    };
  }
}
