import { AppConfig, RateLimitQuota } from '../config/config.js';

/** What a route is limited by: the caller's tier (anonymous, agent or operator), or its own per-address policy. */
export type RouteLimit = 'api' | 'registration' | 'token' | 'mcp_housekeeping' | 'form_token';
export type PolicyName =
  'anonymous' | 'agent' | 'verified_agent' | 'agent_per_address' | 'operator' | 'registration' | 'token' | 'mcp_housekeeping' | 'form_token';

export interface Policy extends RateLimitQuota {
  name: PolicyName;
}

/**
 * The tiers by bearer presence, and the per-IP policies of registration, token and form-token endpoints
 * (docs/decisions/0011-rate-limit-tiers.md).
 */
export function policies(config: AppConfig): Record<PolicyName, Policy> {
  return {
    anonymous: { name: 'anonymous', ...config.rateLimitAnonymous },
    agent: { name: 'agent', ...config.rateLimitAgent },
    // A claimed registration, by registration: a known party, not charged to the ceiling of its address.
    verified_agent: { name: 'verified_agent', ...config.rateLimitVerifiedAgent },
    // Charged with `agent`: the live registrations made from one address share this ceiling
    // (docs/decisions/0013-identity-ceiling-per-address.md).
    agent_per_address: { name: 'agent_per_address', ...config.rateLimitAgentPerAddress },
    // Operator clients, by client id (docs/decisions/0021-operator-clients-and-client-credentials.md).
    operator: { name: 'operator', ...config.rateLimitOperator },
    registration: { name: 'registration', ...config.rateLimitRegistration },
    token: { name: 'token', ...config.rateLimitToken },
    mcp_housekeeping: { name: 'mcp_housekeeping', ...config.rateLimitMcpHousekeeping },
    // GET /forms/token: every form shown takes one, whoever shows it, so its own budget, never the leads'.
    form_token: { name: 'form_token', ...config.rateLimitFormToken },
  };
}
