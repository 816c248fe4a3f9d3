import { contractSchema } from '../../support/contract.js';
import type { Reply } from './http-client.js';

const validateProblem = contractSchema('/components/schemas/Problem');

/**
 * Why `reply` is not the 503 a dependency outage must give (a `service_unavailable` problem with Retry-After), or
 * undefined when it is.
 */
export function notUnavailableProblem(reply: Reply): string | undefined {
  let body: { code?: string; status?: number; type?: string };
  try {
    body = JSON.parse(reply.body);
  } catch {
    return `not JSON: ${reply.body.slice(0, 100)}`;
  }
  if (!validateProblem(body)) return `not a problem of the contract: ${JSON.stringify(validateProblem.errors)}`;
  const retryAfter = Number(reply.headers['retry-after']);
  if (reply.status !== 503 || body.status !== 503 || body.code !== 'service_unavailable' || !body.type?.endsWith('/docs/errors#service_unavailable')) {
    return `${reply.status} ${reply.body.slice(0, 200)}`;
  }
  if (!String(reply.headers['content-type']).startsWith('application/problem+json')) return `content-type ${reply.headers['content-type']}`;
  if (!Number.isInteger(retryAfter) || retryAfter < 1) return `Retry-After ${reply.headers['retry-after']}`;
  return undefined;
}
