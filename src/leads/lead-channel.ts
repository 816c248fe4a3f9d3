import type { Request } from 'express';

/** The surface a lead came through: a label for marketers, worked out by the service, never read from the body or used for a decision. */
export const LEAD_CHANNELS = ['api', 'form', 'mcp', 'cli'] as const;
export type LeadChannel = (typeof LEAD_CHANNELS)[number];

/** The User-Agent of the command-line client (cli/leads.ts: `leads-cli/<version> (node …)`). */
const CLI_USER_AGENT = 'leads-cli/';

/**
 * The channel of a lead sent over HTTP: `cli` for the command-line client; `form` for a browser page (the form script or
 * a page's own fetch), known by what only browsers send: `Origin` on a POST, or `Sec-Fetch-Site`. Not by
 * `Sec-Fetch-Mode: cors`, which Node's fetch sends too. `api` otherwise (Node's fetch, curl, Python's requests).
 * Advisory: any client can send these headers. Header reads only, on the benchmarked path. The MCP tool says `mcp` itself.
 */
export function leadChannelOf(req: Request): LeadChannel {
  const headers = req.headers;
  if (headers['user-agent']?.startsWith(CLI_USER_AGENT)) return 'cli';
  if (headers.origin !== undefined || headers['sec-fetch-site'] !== undefined) return 'form';
  return 'api';
}
