import { foldEmail } from '../leads/lead-rules.js';
import type { Steps } from '../database/step-transaction.js';

/** A registration as the erasure clears an address from it. */
export interface RegistrationNamingAddress {
  id: string;
  contacts: string | null;
  email: string | null;
  verified_email: string | null;
}

/** The distinct case-folded addresses a registration names: its contacts, its verified_email assertion or login hint, the address its owner proved. */
export function registrationAddresses(contacts: readonly string[] | undefined, email: string | undefined): string[] {
  return [...new Set([...(contacts ?? []), ...(email === undefined ? [] : [email])].map((address) => foldEmail(address.trim())))];
}

/** The registrations that name an address (case-folded, the first parameter), through its index. */
export const REGISTRATIONS_NAMING = (p: (n: number) => string): string =>
  `SELECT r.id, r.contacts, r.email, r.verified_email FROM agent_registration_addresses a JOIN agent_registrations r ON r.id = a.registration_id WHERE a.email_folded = ${p(1)}`;

/**
 * Inside the erasure's transaction: the registrations that name the address (case-folded), found through its index,
 * with the index rows removed, since the caller removes the address from them in the same transaction.
 * `p(n)` is the n-th placeholder of the database.
 */
export function* takeRegistrationsNaming(emailFolded: string, p: (n: number) => string): Steps<RegistrationNamingAddress[]> {
  const rows = yield [REGISTRATIONS_NAMING(p), [emailFolded]];
  if (rows.length) yield [`DELETE FROM agent_registration_addresses WHERE email_folded = ${p(1)}`, [emailFolded]];
  return rows as unknown as RegistrationNamingAddress[];
}
