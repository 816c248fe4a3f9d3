import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * The client's address: Express's `req.ip` (the socket, or the X-Forwarded-For entry TRUST_PROXY selects), but only
 * when it is an IP address; a forwarded header can carry anything, and this value keys stored state.
 */
export function clientIp(req: Request): string {
  // Express works req.ip out from the headers on each read; the rate limiter and the caller both ask.
  return ((req as Request & { [CLIENT_IP]?: string })[CLIENT_IP] ??= addressOf(req));
}

const CLIENT_IP = Symbol('client-ip');

function addressOf(req: Request): string {
  const ip = req.ip;
  return ip && isIP(ip) ? ip : (req.socket.remoteAddress ?? 'unknown');
}
