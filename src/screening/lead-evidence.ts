import { isIP } from 'node:net';
import type { Request } from 'express';
import { clientIp, forwardedIp } from '../request/client-ip.js';

/** The request headers that carry evidence: a browser page must be allowed to send them cross-origin (CORS). */
export const SCREENING_HEADERS = ['Captcha-Token', 'Form-Token', 'Form-Trap'] as const;

/** What a request tells screening beyond the lead itself (docs/decisions/0033-screening.md). */
export interface LeadEvidence {
  /** The client address as rate limits key it (an IPv6 client by its prefix): the burst rule counts per address. */
  address: string;
  /** The address itself, as the socket or a trusted proxy gave it (a plain IP address or nothing): siteverify's `remoteip`. */
  remoteIp: string | undefined;
  /** The captcha widget's token (`Captcha-Token`). */
  captchaToken?: string;
  /** The form script's single-use token (`Form-Token`). */
  formToken?: string;
  /** The form's trap field (`Form-Trap`), empty when a person sent the form: a person never fills it. */
  formTrap?: string;
  /** The same for every attempt at one keyed lead (caller, Idempotency-Key, body): siteverify's idempotency key. */
  retryKey?: string;
}

/** The evidence of a POST /api/v1/lead: the captcha token, and the form script's token and trap field. Header reads only. */
export function evidenceOf(req: Request): LeadEvidence {
  const headers = req.headers;
  return {
    address: clientIp(req),
    remoteIp: remoteIpOf(req),
    captchaToken: present(headers['captcha-token']),
    formToken: present(headers['form-token']),
    // Empty is what the form script sends for a trap left alone: present, and not filled.
    formTrap: headers['form-trap'] === undefined ? undefined : String(headers['form-trap']),
  };
}

/** The evidence of an MCP call: its HTTP request's captcha token (a form does not post to /mcp). */
export function captchaEvidenceOf(req: Request): LeadEvidence {
  return { address: clientIp(req), remoteIp: remoteIpOf(req), captchaToken: present(req.headers['captcha-token']) };
}

/**
 * The forwarded entry TRUST_PROXY selects can be anything a client wrote (with more hops configured than there are):
 * as for clientIp, only a plain address is trusted, else the socket's. IPv4-mapped IPv6 as the IPv4 address.
 */
function remoteIpOf(req: Request): string | undefined {
  return plainIp(forwardedIp(req)) ?? plainIp(req.socket?.remoteAddress);
}

function plainIp(address: string | undefined): string | undefined {
  if (!address || !isIP(address) || address.includes('%')) return undefined;
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** An empty header field is no token. */
function present(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text ? text : undefined;
}
