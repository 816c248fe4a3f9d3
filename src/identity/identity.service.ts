import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AGENT_SCOPES } from '../auth/scopes.js';
import { TokenService } from '../oauth/token.service.js';
import { AgentRegistration, RegistrationType } from './agent-registration.entity.js';
import { parseIdentityRequest } from './identity-request.js';

const CLAIM_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

export interface IdentityResponse {
  registration_id: string;
  registration_type: RegistrationType;
  identity_assertion: string;
  assertion_expires: string;
  scopes: string[];
  claim_token: string;
  claim_token_expires: string;
}

@Injectable()
export class IdentityService {
  constructor(
    @InjectRepository(AgentRegistration) private readonly registrations: Repository<AgentRegistration>,
    private readonly tokens: TokenService,
  ) {}

  /** Stores a registration and answers with its service-signed assertion; the claim token is shown once, kept as a hash. */
  async register(body: Record<string, unknown>, registeredFrom: string): Promise<IdentityResponse> {
    const request = parseIdentityRequest(body);
    const now = new Date();
    const claimToken = `clm_${randomBytes(24).toString('base64url')}`;
    const registration: AgentRegistration = {
      id: `reg_${randomBytes(16).toString('base64url')}`,
      type: request.type,
      clientName: request.clientName ?? null,
      contacts: request.contacts ? JSON.stringify(request.contacts) : null,
      email: request.email ?? null,
      scopes: AGENT_SCOPES.join(' '),
      claimTokenHash: createHash('sha256').update(claimToken).digest('hex'),
      claimTokenExpiresAt: new Date(now.getTime() + CLAIM_TOKEN_LIFETIME_MS),
      createdAt: now,
      revokedAt: null,
      registeredFrom,
    };
    await this.registrations.insert(registration);
    const { assertion, expiresAt } = await this.tokens.signAssertion(registration);
    return {
      registration_id: registration.id,
      registration_type: registration.type,
      identity_assertion: assertion,
      assertion_expires: expiresAt.toISOString(),
      scopes: [...AGENT_SCOPES],
      claim_token: claimToken,
      claim_token_expires: registration.claimTokenExpiresAt.toISOString(),
    };
  }
}
