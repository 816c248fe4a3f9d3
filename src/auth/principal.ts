import type { Request } from 'express';

/** Who is calling: nobody in particular, or a registered agent proven by its access token. */
export type Principal =
  | { kind: 'anonymous' }
  /** `registeredFrom`: the client address its registration came from, whose ceiling it shares (null before it was stored). */
  | { kind: 'agent'; registrationId: string; registeredFrom: string | null };

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous' });

export type RequestWithPrincipal = Request & { principal?: Principal };

export function principalOf(req: Request): Principal {
  return (req as RequestWithPrincipal).principal ?? ANONYMOUS;
}
