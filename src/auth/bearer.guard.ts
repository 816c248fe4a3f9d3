import { applyDecorators, CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { distinctHeader } from '../http/distinct-header.js';
import { TokenService } from '../oauth/token.service.js';
import { RequestWithPrincipal } from './principal.js';

const OPTIONAL_BEARER = Symbol('optional-bearer');

/** Marks a route (or controller) that serves anonymous callers and registered agents with their bearer token. */
export const OptionalBearer = () => applyDecorators(SetMetadata(OPTIONAL_BEARER, true));

/**
 * The one authentication step: on marked routes it turns the request into an anonymous or agent principal for the
 * rate limiter and the services. A token that is present but bad is a 401, never a silent downgrade (decisions §6).
 */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.reflector.getAllAndOverride<boolean>(OPTIONAL_BEARER, [context.getHandler(), context.getClass()])) return true;
    const req = context.switchToHttp().getRequest<RequestWithPrincipal>();
    req.principal = await this.tokens.authenticate(distinctHeader(req, 'authorization'));
    return true;
  }
}
