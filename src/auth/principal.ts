import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** Who is calling: nobody in particular, or a registered agent proven by its access token. */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'agent'; registrationId: string; scopes: string[]; tokenId: string; expiresAt: number };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous' });

export type RequestWithPrincipal = Request & { principal?: Principal };

export function principalOf(req: Request): Principal {
  return (req as RequestWithPrincipal).principal ?? ANONYMOUS;
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext) => principalOf(ctx.switchToHttp().getRequest<Request>()));
