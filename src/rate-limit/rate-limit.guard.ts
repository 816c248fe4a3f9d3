import { ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { principalOf } from '../auth/principal.js';
import { AppError } from '../problem/app-error.js';
import { PolicyName, RouteLimit } from './rate-limit.policies.js';
import { Charge, RateLimitStore } from './rate-limit.store.js';

const ROUTE_LIMIT = Symbol('route-limit');

/**
 * Puts a route (or controller) under rate limits: the caller's tier (`api`), or the registration or token policy; or a
 * function that picks one per request, for a route whose messages differ in cost (MCP: work or housekeeping).
 */
export const RateLimit = (limit: RouteLimit | ((req: Request) => RouteLimit)) => SetMetadata(ROUTE_LIMIT, limit);

function routeLimit(context: ExecutionContext): RouteLimit | ((req: Request) => RouteLimit) | undefined {
  return Reflect.getMetadata(ROUTE_LIMIT, context.getHandler()) ?? Reflect.getMetadata(ROUTE_LIMIT, context.getClass());
}

/** The one policy that applies to this request: the route's own, or the caller's tier on `api` routes. */
function policyFor(context: ExecutionContext, req: Request): PolicyName | undefined {
  const route = routeLimit(context);
  const limit = typeof route === 'function' ? route(req) : route;
  if (limit !== 'api') return limit;
  // Each kind of caller has its tier, of the same name; people of the inbox spend the operators' (by user id).
  const principal = principalOf(req);
  if (principal.kind === 'agent' && principal.claimed) return 'verified_agent';
  return principal.kind === 'person' ? 'operator' : principal.kind;
}

/** The counter of a policy is shared by every route under it: one budget per caller, whatever it calls. */
export function rateLimitKey(policy: string, tracker: string): string {
  return `${policy}:${tracker}`;
}

/**
 * @nestjs/throttler's guard with the IETF RateLimit fields instead of X-RateLimit-*: every limited response, success
 * or error, says its policy and what is left; a 429 is a `rate_limited` problem with Retry-After. It runs after the
 * BearerGuard, so the tier follows the token. GraphQL and MCP join the same budgets through the same guard.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /** Only the request's own policy is counted: the base guard would consult every named throttler on every request. */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = policyFor(context, this.getRequestResponse(context).req as Request);
    const throttler = policy && this.throttlers.find((candidate) => candidate.name === policy);
    if (!throttler) return true;
    const ttl = throttler.ttl as number;
    return this.handleRequest({
      context,
      limit: throttler.limit as number,
      ttl,
      throttler,
      blockDuration: ttl,
      getTracker: throttler.getTracker!,
      generateKey: this.commonOptions.generateKey!,
    });
  }

  protected override async handleRequest({ context, limit, ttl, throttler, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const name = throttler.name!;
    const charges: Counter[] = [{ name, limit, ttl, key: generateKey(context, await getTracker(req, context), name) }];
    // An agent also spends the ceiling it shares with the other live registrations of its registering address.
    const principal = principalOf(req as Request);
    const ceiling =
      name === 'agent' && principal.kind === 'agent' && principal.registeredFrom
        ? this.throttlers.find((candidate) => candidate.name === 'agent_per_address')
        : undefined;
    if (ceiling) {
      charges.push({
        name: ceiling.name!,
        limit: ceiling.limit as number,
        ttl: ceiling.ttl as number,
        key: generateKey(context, await ceiling.getTracker!(req, context), ceiling.name!),
      });
    }
    // The store is always ours (RateLimitModule): several counters, one round trip.
    const counts = await (this.storageService as RateLimitStore).incrementAll(charges);
    // Named fields, not object spread: spreading the store's records went to V8's runtime, 3% of a lead's CPU.
    const states = charges.map(({ name, limit, ttl }, i): CounterState => ({
      name,
      limit,
      ttl,
      totalHits: counts[i].totalHits,
      timeToExpire: counts[i].timeToExpire,
    }));
    reportQuota(res as Response, states);
    return true;
  }
}

/** A counter of one policy: its name, quota and window (ms), and the store key. */
export interface Counter extends Charge {
  name: string;
  limit: number;
}

/** A counter after this request's hit. */
export interface CounterState extends Omit<Counter, 'key'> {
  totalHits: number;
  timeToExpire: number;
}

/**
 * Sets RateLimit-Policy and RateLimit, one list member per counter (the request's own policy first), and throws the
 * 429 `rate_limited` problem with Retry-After when any of them is over its quota. Shared with the bearer guard, which
 * counts failed tokens.
 */
export function reportQuota(res: Response, counters: CounterState[]): void {
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  res.setHeader('RateLimit-Policy', counters.map(({ name, limit, ttl }) => `"${name}";q=${limit};w=${Math.round(ttl / 1000)}`).join(', '));
  res.setHeader(
    'RateLimit',
    counters.map(({ name, limit, totalHits, timeToExpire }) => `"${name}";r=${Math.max(0, limit - totalHits)};t=${seconds(timeToExpire)}`).join(', '),
  );
  const over = counters.filter((counter) => counter.totalHits > counter.limit);
  if (!over.length) return;
  // Retry when every spent budget is back: an earlier retry would be refused again.
  const { name, limit, ttl, timeToExpire } = over.reduce((longest, counter) => (counter.timeToExpire > longest.timeToExpire ? counter : longest));
  const resetSeconds = seconds(timeToExpire);
  throw new AppError('rate_limited', `The "${name}" quota of ${limit} requests per ${Math.round(ttl / 1000)} s is used up; retry in ${resetSeconds} s.`, {
    headers: { 'Retry-After': String(resetSeconds) },
    tier: name,
  });
}
