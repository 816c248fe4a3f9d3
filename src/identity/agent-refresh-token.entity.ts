import { createHash } from 'node:crypto';
import { Column, Entity, PrimaryColumn } from 'typeorm';

export const REFRESH_TOKEN_PREFIX = 'rt_';

/** The stored form of a refresh token: its SHA-256, hex. */
export const refreshTokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * One refresh token of an agent registration, by its SHA-256: the token is shown once and never stored. A
 * registration's tokens are one family, a chain of rotations (docs/decisions/0030-agent-refresh-tokens.md).
 */
@Entity('agent_refresh_tokens')
export class AgentRefreshToken {
  @PrimaryColumn({ type: 'varchar', name: 'token_hash' })
  tokenHash: string;

  @Column({ type: 'varchar', name: 'registration_id' })
  registrationId: string;

  @Column({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'expires_at' })
  expiresAt: Date;

  /** When it was exchanged for its successor; a spent token presented after the grace period revokes its family. */
  @Column({ name: 'rotated_at', nullable: true, type: Date })
  rotatedAt: Date | null;
}
