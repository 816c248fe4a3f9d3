import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { distinctHeader } from '../request/distinct-header.js';
import { TokenService } from '../oauth/token.service.js';
import { AppError } from '../problem/app-error.js';
import { FailedAuthLimiter } from '../rate-limit/failed-auth.limiter.js';
import { bearerChallenge } from './bearer-challenge.js';
import { RequestWithPrincipal } from './principal.js';
import { isOperatorOnly } from './scopes.js';

/** How a route authenticates: no mark (anonymous only, no token read), an optional bearer, or required scopes. */
export type RouteAuth = { required: false } | { required: true; scopes: readonly string[] };

const AUTH = Symbol('auth');

/** Marks a route (or controller) that serves anonymous callers and any token holder, each with its principal. */
export const OptionalBearer = () => SetMetadata(AUTH, { required: false } satisfies RouteAuth);

/**
 * Marks a route (or controller) that needs an access token granting every one of these scopes: none → 401
 * authentication_required, a token without them → 403 insufficient_scope, each with its Bearer challenge (RFC 6750 §3).
 */
export const RequireScopes = (...scopes: [string, ...string[]]) => SetMetadata(AUTH, { required: true, scopes } satisfies RouteAuth);

export function routeAuth(reflector: Reflector, context: Pick<ExecutionContext, 'getHandler' | 'getClass'>): RouteAuth | undefined {
  return reflector.getAllAndOverride<RouteAuth | undefined>(AUTH, [context.getHandler(), context.getClass()]);
}

/**
 * What the contract states for a route with this mark (the operation's OpenAPI `security`): the decorators above are
 * the one place that says which routes take a token, and test/route-contract.e2e-spec.ts holds the contract to them.
 */
export function openApiSecurity(auth: RouteAuth | undefined): Record<string, string[]>[] {
  if (!auth) return [];
  if (!auth.required) return [{}, { bearerAuth: [] }];
  return [{ [isOperatorOnly(auth.scopes) ? 'operatorAuth' : 'bearerAuth']: [...auth.scopes] }];
}

/**
 * The one authentication step: on marked routes it turns the request into a principal (anonymous, agent or operator,
 * with its scopes) for the rate limiter and the services, and enforces required scopes. A token that is present but
 * bad is a 401, never a silent downgrade (docs/decisions/0009-bearer-tokens-are-optional-never-ignored.md), and it
 * spends the client address's anonymous budget: a 429 once spent, before any lookup
 * (docs/decisions/0012-failed-authentication-spends-the-anonymous-budget.md).
 */
@Injectable()
export class BearerGuard implements CanActivate {
  private readonly publicBaseUrl: string;

  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly failures: FailedAuthLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.publicBaseUrl = config.publicBaseUrl;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const auth = routeAuth(this.reflector, context);
    if (!auth) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithPrincipal>();
    const res = http.getResponse<Response>();
    let principal;
    try {
      principal = await this.tokens.authenticate(distinctHeader(req, 'authorization'), () => this.failures.refuseIfSpent(req, res));
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_token') await this.failures.charge(req, res);
      throw error;
    }
    req.principal = principal;
    if (!auth.required) return true;
    const scope = auth.scopes.join(' ');
    if (principal.kind === 'anonymous') {
      // No error attribute: RFC 6750 §3.1 keeps error codes for requests that carried a token.
      throw new AppError('authentication_required', `This operation needs an access token with the scope ${scope}.`, {
        headers: { 'WWW-Authenticate': bearerChallenge(this.publicBaseUrl, { scope }) },
      });
    }
    const missing = auth.scopes.filter((needed) => !principal.scopes.includes(needed));
    if (missing.length) {
      throw new AppError('insufficient_scope', `The access token does not grant ${missing.join(' ')}, which this operation needs.`, {
        headers: { 'WWW-Authenticate': bearerChallenge(this.publicBaseUrl, { error: 'insufficient_scope', scope }) },
      });
    }
    return true;
  }
}
