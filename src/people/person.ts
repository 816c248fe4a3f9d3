import type { Role } from './roles.js';

/** A person of the inbox: the address they sign in with (folded, as stored to be found) and their role. */
export interface Person {
  id: string;
  email: string;
  role: Role;
  createdAt: number;
}
