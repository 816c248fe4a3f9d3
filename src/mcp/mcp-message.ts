import type { Request } from 'express';
import { parseJsonBody } from '../body/json-body.js';
import { AppError } from '../problem/app-error.js';
import type { RouteLimit } from '../rate-limit/rate-limit.policies.js';

/** The methods that do work (a tool, a resource, a prompt); everything else is protocol housekeeping. */
const WORK_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/** A /mcp body as read once: the JSON value (`{}` for a non-JSON media type, which the SDK answers), or why it is unreadable. */
export type McpBody = { value: unknown; error?: undefined } | { value?: undefined; error: AppError };

const bodies = new WeakMap<Request, McpBody>();

/** Parses the body once per request: the rate limiter reads the method before the controller runs, and the service reuses it. */
export function mcpBody(req: Request): McpBody {
  let body = bodies.get(req);
  if (!body) {
    body = { value: {} };
    if (/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      try {
        body = { value: parseJsonBody(req) };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        body = { error };
      }
    }
    bodies.set(req, body);
  }
  return body;
}

/**
 * The rate limit of a /mcp POST: a single message that does work spends the caller's api budget, like a REST call;
 * housekeeping (initialize, notifications, ping, lists, unreadable bodies and refused batches) spends its own allowance.
 */
export function mcpRouteLimit(req: Request): RouteLimit {
  const message = mcpBody(req).value as { method?: unknown } | null | undefined;
  return typeof message?.method === 'string' && WORK_METHODS.has(message.method) ? 'api' : 'mcp_housekeeping';
}
