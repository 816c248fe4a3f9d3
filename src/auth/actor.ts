import type { Request } from 'express';
import { callerOf, type Caller } from './caller.decorator.js';
import { principalOf } from './principal.js';

/**
 * Who acted, as a record of it names them (a screening decision's `decided_by`, a data-subject request's audit row):
 * the operator client's id, or `person:<user id>` for a person of the inbox (never their address); null for others.
 */
export function actorOf(req: Request): string | null {
  const principal = principalOf(req);
  return principal.kind === 'person' ? `person:${principal.userId}` : callerOf(req).clientId;
}

/** callerOf, with the actor in `clientId`: what services that record their caller's client record for a person too. */
export function actingCallerOf(req: Request): Caller {
  return { ...callerOf(req), clientId: actorOf(req) };
}
