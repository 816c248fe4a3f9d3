import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * The client's address: Express's `req.ip` (the socket, or the X-Forwarded-For entry TRUST_PROXY selects), but only
 * when it is an IP address; a forwarded header can carry anything, and this value keys stored state.
 */
export function clientIp(req: Request): string {
  const ip = req.ip;
  return ip && isIP(ip) ? ip : (req.socket.remoteAddress ?? 'unknown');
}
