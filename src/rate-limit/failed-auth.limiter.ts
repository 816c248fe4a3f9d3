import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { clientIp } from '../request/client-ip.js';
import { policies, Policy } from './rate-limit.policies.js';
import { rateLimitKey, reportQuota } from './rate-limit.guard.js';
import { RateLimitStore } from './rate-limit.store.js';

/** How many addresses are remembered as having spent their budget on bad tokens; the oldest goes first. */
const SPENT_MEMO_SIZE = 10_000;

/**
 * A request whose bearer token fails is an anonymous request that failed: it spends the client address's anonymous
 * budget (docs/decisions/0012-failed-authentication-spends-the-anonymous-budget.md). Once failures have spent it, a
 * token this instance does not know yet is refused with 429 before any lookup, from a local memo (no round trip);
 * tokens already verified here go on to their own tier.
 */
@Injectable()
export class FailedAuthLimiter {
  private readonly policy: Policy;
  private readonly ttl: number;
  /** Client address → when its anonymous window resets, for addresses whose failures used up the quota. */
  private readonly spent = new Map<string, number>();

  constructor(
    private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.policy = policies(config).anonymous;
    this.ttl = this.policy.windowSeconds * 1000;
  }

  /** Throws the 429 when failed tokens from this address have already spent its anonymous budget. */
  refuseIfSpent(req: Request, res: Response): void {
    const ip = clientIp(req);
    const resetAt = this.spent.get(ip);
    if (resetAt === undefined) return;
    const left = resetAt - Date.now();
    if (left <= 0) this.spent.delete(ip);
    else reportQuota(res, [{ ...this.policy, ttl: this.ttl, totalHits: this.policy.limit + 1, timeToExpire: left }]);
  }

  /** Counts one failed authentication: sets the RateLimit fields for its 401, or throws the 429 once over the quota. */
  async charge(req: Request, res: Response): Promise<void> {
    const ip = clientIp(req);
    const { totalHits, timeToExpire } = await this.store.increment(rateLimitKey(this.policy.name, ip), this.ttl);
    if (totalHits >= this.policy.limit) {
      // Nothing left: the next unknown token from here is refused without being looked at.
      this.spent.delete(ip);
      if (this.spent.size >= SPENT_MEMO_SIZE) this.spent.delete(this.spent.keys().next().value!);
      this.spent.set(ip, Date.now() + timeToExpire);
    }
    reportQuota(res, [{ ...this.policy, ttl: this.ttl, totalHits, timeToExpire }]);
  }
}
