import { Column, Entity, PrimaryColumn } from 'typeorm';
import { MILLISECONDS } from '../webhooks/webhook-endpoint.entity.js';

export type RegistrationType = 'anonymous' | 'identity_assertion' | 'service_auth';

/** A self-registered agent. `client_name`, `contacts` and `email` are self-reported: stored, never trusted. */
@Entity('agent_registrations')
export class AgentRegistration {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar' })
  type: RegistrationType;

  @Column({ type: 'varchar', name: 'client_name', nullable: true })
  clientName: string | null;

  /** JSON array of e-mail addresses. */
  @Column({ type: 'text', nullable: true })
  contacts: string | null;

  @Column({ type: 'varchar', nullable: true })
  email: string | null;

  /** Space-separated scopes granted to this registration. */
  @Column({ type: 'varchar' })
  scopes: string;

  /** SHA-256 of the claim token; the token itself is returned once and never stored. */
  @Column({ type: 'varchar', name: 'claim_token_hash' })
  claimTokenHash: string;

  @Column({ name: 'claim_token_expires_at' })
  claimTokenExpiresAt: Date;

  @Column({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'revoked_at', nullable: true, type: Date })
  revokedAt: Date | null;

  /**
   * When the last of its claim token, identity assertions (with the access tokens they give) and refresh tokens
   * expires: moved on at each refresh; after it the registration is purged (RegistrationPurge).
   */
  @Column({ name: 'expires_at' })
  expiresAt: Date;

  /** When its owner claimed it (the claim ceremony; src/identity/claims.service.ts): a known party from then on. */
  @Column({ type: 'bigint', name: 'claimed_at', nullable: true, transformer: MILLISECONDS })
  claimedAt: number | null;

  /** The address its owner proved at the claim; its assertions carry it with `email_verified: true`. */
  @Column({ type: 'varchar', name: 'verified_email', nullable: true })
  verifiedEmail: string | null;

  /** The client address (as the rate limiter keys it) that registered: its live registrations share one agent ceiling. */
  @Column({ type: 'text', name: 'registered_from', nullable: true })
  registeredFrom: string | null;
}
