import type { Request } from 'express';
import { jsonBodyOf } from '../body/request-body.js';
import { AppError } from '../problem/app-error.js';
import type { RouteLimit } from '../rate-limit/rate-limit.policies.js';

/** The methods that do work (a tool, a resource, a prompt); everything else is protocol housekeeping. */
const WORK_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/** A /mcp body: the JSON value (`{}` for a non-JSON media type, which the SDK answers), or why it is unreadable. */
export type McpBody = { value: unknown; error?: undefined } | { value?: undefined; error: AppError };

/** Read by the rate limiter before the controller runs, and by the service; the body middleware parsed it once. */
export function mcpBody(req: Request): McpBody {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return { value: {} };
  try {
    return { value: jsonBodyOf(req) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error };
  }
}

/**
 * The rate limit of a /mcp POST: a single message that does work spends the caller's api budget, like a REST call;
 * housekeeping (initialize, notifications, ping, lists, unreadable bodies and refused batches) spends its own allowance.
 */
export function mcpRouteLimit(req: Request): RouteLimit {
  const message = mcpBody(req).value as { method?: unknown } | null | undefined;
  return typeof message?.method === 'string' && WORK_METHODS.has(message.method) ? 'api' : 'mcp_housekeeping';
}
