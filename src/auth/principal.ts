import type { Request } from 'express';
import type { Role } from '../people/roles.js';

/**
 * Who is calling, with the scopes its access token grants: nobody in particular (no token), a registered agent, an
 * operator (a service's own client; a token marks it with `kind: "operator"`, see TokenService.authenticate), or a
 * person of the inbox (a session cookie, src/inbox/inbox-sessions.service.ts).
 */
export type Principal =
  | { kind: 'anonymous'; scopes: readonly string[] }
  /** `registeredFrom`: the client address its registration came from, whose ceiling it shares (null before it was stored). */
  /** `claimed`: its owner proved an address (the claim ceremony): the verified_agent tier. */
  | { kind: 'agent'; registrationId: string; registeredFrom: string | null; claimed: boolean; scopes: readonly string[] }
  | { kind: 'operator'; clientId: string; scopes: readonly string[] }
  /** A person signed in to the inbox (src/inbox/), with the scopes of their role; audit lines name them by userId only. */
  | { kind: 'person'; userId: string; role: Role; scopes: readonly string[] };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', scopes: Object.freeze([]) });

export type RequestWithPrincipal = Request & { principal?: Principal };

export function principalOf(req: Request): Principal {
  return (req as RequestWithPrincipal).principal ?? ANONYMOUS;
}
