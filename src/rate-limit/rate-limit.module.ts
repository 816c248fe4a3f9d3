import { DynamicModule, Global, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import { principalOf } from '../auth/principal.js';
import { AppConfig } from '../config/config.js';
import { clientIp } from '../request/client-ip.js';
import { FailedAuthLimiter } from './failed-auth.limiter.js';
import { policies, PolicyName } from './rate-limit.policies.js';
import { rateLimitKey } from './rate-limit.guard.js';
import { RateLimitStore } from './rate-limit.store.js';

/**
 * The store as an ordinary provider, so that Nest runs its lifecycle hooks (connect to Redis, and quit on shutdown).
 * One module, so one store, for the throttler and for every module that counts something else in it (screening).
 */
@Module({ providers: [RateLimitStore], exports: [RateLimitStore] })
export class RateLimitStoreModule {}

const TRACKERS: Record<PolicyName, (req: Request) => string> = {
  anonymous: clientIp,
  agent: (req) => {
    const principal = principalOf(req);
    return principal.kind === 'agent' ? principal.registrationId : 'unknown';
  },
  verified_agent: (req) => {
    const principal = principalOf(req);
    return principal.kind === 'agent' ? principal.registrationId : 'unknown';
  },
  agent_per_address: (req) => {
    const principal = principalOf(req);
    return (principal.kind === 'agent' && principal.registeredFrom) || 'unknown';
  },
  // Every token of one client shares its budget; every session of one person of the inbox shares theirs.
  operator: (req) => {
    const principal = principalOf(req);
    if (principal.kind === 'person') return `person:${principal.userId}`;
    return principal.kind === 'operator' ? principal.clientId : 'unknown';
  },
  registration: clientIp,
  token: clientIp,
  // Per client address, token or not: free registrations must not multiply it (the identity ceiling's reasoning).
  mcp_housekeeping: clientIp,
  form_token: clientIp,
};

@Global()
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: RateLimitModule,
      imports: [
        RateLimitStoreModule,
        ThrottlerModule.forRootAsync({
          imports: [RateLimitStoreModule],
          inject: [RateLimitStore],
          useFactory: (store: RateLimitStore) => ({
            storage: store,
            setHeaders: false,
            generateKey: (_context, tracker, name) => rateLimitKey(name, tracker),
            throttlers: Object.values(policies(config)).map((policy) => ({
              name: policy.name,
              limit: policy.limit,
              ttl: policy.windowSeconds * 1000,
              getTracker: (req: Record<string, unknown>) => TRACKERS[policy.name](req as unknown as Request),
            })),
          }),
        }),
      ],
      providers: [FailedAuthLimiter],
      exports: [RateLimitStoreModule, FailedAuthLimiter],
    };
  }
}
