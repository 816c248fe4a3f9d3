import { applyDecorators, CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { distinctHeader } from '../request/distinct-header.js';
import { TokenService } from '../oauth/token.service.js';
import { AppError } from '../problem/app-error.js';
import { FailedAuthLimiter } from '../rate-limit/failed-auth.limiter.js';
import { RequestWithPrincipal } from './principal.js';

const OPTIONAL_BEARER = Symbol('optional-bearer');

/** Marks a route (or controller) that serves anonymous callers and registered agents with their bearer token. */
export const OptionalBearer = () => applyDecorators(SetMetadata(OPTIONAL_BEARER, true));

/**
 * The one authentication step: on marked routes it turns the request into an anonymous or agent principal for the
 * rate limiter and the services. A token that is present but bad is a 401, never a silent downgrade
 * (docs/decisions/0009-bearer-tokens-are-optional-never-ignored.md), and it spends the client address's anonymous
 * budget: a 429 once spent, before any lookup
 * (docs/decisions/0012-failed-authentication-spends-the-anonymous-budget.md).
 */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly failures: FailedAuthLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.reflector.getAllAndOverride<boolean>(OPTIONAL_BEARER, [context.getHandler(), context.getClass()])) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithPrincipal>();
    const res = http.getResponse<Response>();
    try {
      req.principal = await this.tokens.authenticate(distinctHeader(req, 'authorization'), () => this.failures.refuseIfSpent(req, res));
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_token') await this.failures.charge(req, res);
      throw error;
    }
    return true;
  }
}
