import { CLOCK_SKEW_SECONDS, TOKEN_LIFETIMES } from '../oauth/key-store.service.js';

/**
 * How long after an identity assertion is issued something it gave can still be used: the assertion, an access token
 * exchanged at its last moment, and clock skew for each.
 */
export const ASSERTION_AFTERLIFE_MS = (TOKEN_LIFETIMES.assertion + TOKEN_LIFETIMES.access_token + 2 * CLOCK_SKEW_SECONDS) * 1000;

/**
 * A registration's `expires_at` once an assertion and a refresh token (expiring at `refreshExpiresAt`) are issued at
 * `issuedAt`: nothing they give outlives it.
 */
export function expiryAfterIssue(issuedAt: Date, refreshExpiresAt: Date): Date {
  return new Date(Math.max(issuedAt.getTime() + ASSERTION_AFTERLIFE_MS, refreshExpiresAt.getTime()));
}
