import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { principalOf } from './principal.js';
import { clientIp } from '../request/client-ip.js';

export interface Caller {
  /** Scope of per-caller state such as idempotency keys: the token subject, else the client IP. */
  scope: string;
  /** The agent registration behind the bearer token, if any. */
  registrationId: string | null;
  /** The operator client behind the bearer token, if any. */
  clientId: string | null;
}

export function callerOf(req: Request): Caller {
  const principal = principalOf(req);
  if (principal.kind === 'agent') return { scope: `agent:${principal.registrationId}`, registrationId: principal.registrationId, clientId: null };
  if (principal.kind === 'person') return { scope: `person:${principal.userId}`, registrationId: null, clientId: null };
  if (principal.kind === 'operator') return { scope: `operator:${principal.clientId}`, registrationId: null, clientId: principal.clientId };
  return { scope: `ip:${clientIp(req)}`, registrationId: null, clientId: null };
}

export const CurrentCaller = createParamDecorator((_data: unknown, ctx: ExecutionContext) => callerOf(ctx.switchToHttp().getRequest<Request>()));

/** The client address as the rate limiter keys it (a registration's tokens share that address's agent ceiling). */
export const ClientAddress = createParamDecorator((_data: unknown, ctx: ExecutionContext) => clientIp(ctx.switchToHttp().getRequest<Request>()));
