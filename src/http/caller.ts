import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** Who is calling, for scoping per-caller state such as idempotency keys: the token subject, else the client IP. */
export function callerScope(req: Request): string {
  return `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

export const CallerScope = createParamDecorator((_data: unknown, ctx: ExecutionContext) => callerScope(ctx.switchToHttp().getRequest<Request>()));
