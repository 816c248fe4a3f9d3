import { ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request } from 'express';
import { principalOf } from '../auth/principal.js';
import { AppError } from '../problem/app-error.js';
import { PolicyName, RouteLimit } from './rate-limit.policies.js';

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
  return principalOf(req).kind === 'agent' ? 'agent' : 'anonymous';
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
    const tracker = await getTracker(req, context);
    const { totalHits, timeToExpire } = await this.storageService.increment(generateKey(context, tracker, name), ttl, limit, 0, name);
    const resetSeconds = Math.max(1, Math.ceil(timeToExpire / 1000));
    res.setHeader('RateLimit-Policy', `"${name}";q=${limit};w=${Math.round(ttl / 1000)}`);
    res.setHeader('RateLimit', `"${name}";r=${Math.max(0, limit - totalHits)};t=${resetSeconds}`);
    if (totalHits > limit) {
      throw new AppError('rate_limited', `The "${name}" quota of ${limit} requests per ${Math.round(ttl / 1000)} s is used up; retry in ${resetSeconds} s.`, {
        headers: { 'Retry-After': String(resetSeconds) },
      });
    }
    return true;
  }
}
