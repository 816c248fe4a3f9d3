import { OPERATOR_SCOPES } from '../auth/scopes.js';

/** The inbox's roles (issue 35), each a set of the operator scopes; people management is the admins' alone. */
export const ROLES = ['viewer', 'marketer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Not an OAuth scope (no client holds it): what an inbox page of people management requires (@InboxPage). */
export const MANAGE_PEOPLE = 'people:manage';

const ROLE_SCOPES: Record<Role, readonly string[]> = {
  viewer: Object.freeze(['leads:read']),
  marketer: Object.freeze(['leads:read', 'leads:export', 'leads:screen', 'notifications:manage']),
  admin: Object.freeze([...OPERATOR_SCOPES, MANAGE_PEOPLE]),
};

export function scopesOf(role: Role): readonly string[] {
  return ROLE_SCOPES[role];
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
