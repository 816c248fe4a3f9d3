import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, Repository } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { AppError } from '../problem/app-error.js';
import { SecretBox } from '../secrets/secret-box.js';
import { AgentRefreshToken, REFRESH_TOKEN_PREFIX, refreshTokenHash } from './agent-refresh-token.entity.js';
import { AgentRegistration } from './agent-registration.entity.js';
import { expiryAfterIssue } from './registration-lifetime.js';

export interface IssuedRefreshToken {
  refreshToken: string;
  expiresAt: Date;
}

/**
 * Rotating refresh tokens of agent registrations (docs/decisions/0030-agent-refresh-tokens.md). Every instance may
 * rotate: the database decides who rotates a token (a conditional UPDATE), never this process's memory. A token's
 * successor is derived from it with the service key, so that a second request for the same rotation, on any instance,
 * gets the same successor without any token being stored in a form that could be read back.
 */
@Injectable()
export class RefreshTokens implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RefreshTokens');
  private readonly ttlMs: number;
  private readonly graceMs: number;
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    @InjectRepository(AgentRefreshToken) private readonly tokens: Repository<AgentRefreshToken>,
    @InjectRepository(AgentRegistration) private readonly registrations: Repository<AgentRegistration>,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.ttlMs = config.agentRefreshTokenTtlMs;
    this.graceMs = config.agentRefreshGraceMs;
  }

  /** An expired token is refused whatever it is, so its row is no longer needed, not even for reuse detection. */
  onModuleInit(): void {
    this.purgeTimer ??= setInterval(() => void this.tokens.delete({ expiresAt: LessThan(new Date()) }).catch(() => undefined), 3_600_000).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  /** When a token issued at `now` expires. */
  expiryOfIssuedAt(now: Date): Date {
    return new Date(now.getTime() + this.ttlMs);
  }

  /** The first token of a registration's family. */
  async issue(registrationId: string, now: Date): Promise<IssuedRefreshToken> {
    const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const expiresAt = this.expiryOfIssuedAt(now);
    await this.tokens.insert({ tokenHash: refreshTokenHash(refreshToken), registrationId, createdAt: now, expiresAt, rotatedAt: null });
    return { refreshToken, expiresAt };
  }

  /**
   * Spends `presented` and answers its successor with the live registration it belongs to. Presented again within the
   * grace period after its rotation, it gets the same successor; after it, the registration is revoked with its
   * whole family (RFC 9700 §4.14.2). Anything else that cannot be refreshed is 400 invalid_refresh_token.
   */
  async rotate(presented: string): Promise<IssuedRefreshToken & { registration: AgentRegistration }> {
    const hash = refreshTokenHash(presented);
    let row = await this.tokens.findOneBy({ tokenHash: hash });
    const registration = row && (await this.registrations.findOneBy({ id: row.registrationId }));
    const now = new Date();
    if (!row || !registration || registration.revokedAt || row.expiresAt.getTime() <= now.getTime()) throw invalidRefreshToken();

    const successor = this.successorOf(presented);
    if (!row.rotatedAt) {
      const claimed = await this.tokens.update({ tokenHash: hash, rotatedAt: IsNull() }, { rotatedAt: now });
      if (claimed.affected === 1) return { ...(await this.storeSuccessor(successor, registration.id, now)), registration };
      // Another request, here or on another instance, rotated it first: its rotation time decides.
      row = (await this.tokens.findOneBy({ tokenHash: hash }))!;
    }
    if (row.rotatedAt!.getTime() + this.graceMs > now.getTime()) {
      return { ...(await this.storeSuccessor(successor, registration.id, row.rotatedAt!)), registration };
    }
    await this.registrations.update({ id: registration.id, revokedAt: IsNull() }, { revokedAt: now });
    this.logger.warn({ registration_id: registration.id }, 'A spent refresh token was presented again: registration revoked with its refresh tokens');
    throw invalidRefreshToken();
  }

  /**
   * The successor's row, stored once: by the request that rotated, or by a concurrent one that came between that
   * request's UPDATE and its INSERT. Both write the same values, derived from the rotation time.
   */
  private async storeSuccessor(refreshToken: string, registrationId: string, rotatedAt: Date): Promise<IssuedRefreshToken> {
    const expiresAt = this.expiryOfIssuedAt(rotatedAt);
    await this.tokens
      .insert({ tokenHash: refreshTokenHash(refreshToken), registrationId, createdAt: rotatedAt, expiresAt, rotatedAt: null })
      .catch((error: unknown) => {
        if (!isUniqueViolation(error)) throw error;
      });
    // The new assertion and this token keep the registration from the purge until they expire.
    const registrationExpires = expiryAfterIssue(rotatedAt, expiresAt);
    await this.registrations.update({ id: registrationId, expiresAt: LessThan(registrationExpires) }, { expiresAt: registrationExpires });
    return { refreshToken, expiresAt };
  }

  private successorOf(token: string): string {
    return `${REFRESH_TOKEN_PREFIX}${this.box.mac(token, 'agent_refresh_successor').toString('base64url')}`;
  }
}

function invalidRefreshToken(): AppError {
  return new AppError('invalid_refresh_token', 'The refresh token is unknown, expired, already used or of a revoked registration.');
}
