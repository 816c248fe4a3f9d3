/**
 * The scopes this service grants. Agents (JWT-bearer grant) get AGENT_SCOPES only; operator clients (client
 * credentials grant) any subset of OPERATOR_SCOPES they were created with. Discovery lists both.
 */
export const AGENT_SCOPES: readonly string[] = Object.freeze(['leads:write']);
export const OPERATOR_SCOPES: readonly string[] = Object.freeze([
  'leads:read',
  'leads:export',
  'leads:write',
  'webhooks:manage',
  'leads:erase',
  'leads:screen',
  'notifications:manage',
]);
export const ALL_SCOPES: readonly string[] = Object.freeze([...new Set([...AGENT_SCOPES, ...OPERATOR_SCOPES])]);

/** A route whose scopes no agent can hold is an operator route; the contract documents it with the client-credentials scheme. */
export function isOperatorOnly(scopes: readonly string[]): boolean {
  return scopes.some((scope) => !AGENT_SCOPES.includes(scope));
}
