import { isIP } from 'node:net';
import type { Request } from 'express';

/** The Express setting createApp stores IPV6_PREFIX_LENGTH in, so that each app instance buckets by its own config. */
export const IPV6_PREFIX_SETTING = 'ipv6 prefix length';

/**
 * The client's address as the key of its rate limits and idempotency scope: Express's `req.ip` (the socket, or the
 * X-Forwarded-For entry TRUST_PROXY selects), normalised by clientAddressKey. A forwarded entry that is not a plain
 * IP address (garbage, a zone id) is not trusted: the socket's address is used instead.
 */
export function clientIp(req: Request): string {
  // The rate limiter, the caller and screening all ask.
  return ((req as Request & { [CLIENT_IP]?: string })[CLIENT_IP] ??= addressOf(req));
}

/**
 * Express's `req.ip`, read once per request: Express works it out from X-Forwarded-For with TRUST_PROXY's function on
 * every read, and the client address and screening's `remoteip` both need it. With the evidence's object spread gone
 * too, evidenceOf went from 2.6 to 0.3 µs of CPU a lead in profiles (bench/RESULTS.md, issue 33).
 */
export function forwardedIp(req: Request): string | undefined {
  const cached = req as Request & { [FORWARDED_IP]?: string };
  if (!(FORWARDED_IP in cached)) cached[FORWARDED_IP] = req.ip;
  return cached[FORWARDED_IP];
}

const CLIENT_IP = Symbol('client-ip');
const FORWARDED_IP = Symbol('forwarded-ip');

function addressOf(req: Request): string {
  const prefix = (req.app?.get(IPV6_PREFIX_SETTING) as number | undefined) ?? 64;
  return clientAddressKey(forwardedIp(req), prefix) ?? clientAddressKey(req.socket.remoteAddress, prefix) ?? 'unknown';
}

/**
 * One key per client, whatever the spelling: IPv4 as is (Node accepts only the canonical dotted quad), IPv4-mapped
 * IPv6 (`::ffff:a.b.c.d`) as the IPv4 address, other IPv6 in RFC 5952 form cut to its first `prefix` bits
 * (`2001:db8:1:2::/64`): one subscriber gets a whole /64, so per-address keys would be free to multiply.
 * Zone ids (`fe80::1%eth0`) and anything else are refused (undefined): they name no client.
 */
export function clientAddressKey(address: string | undefined, prefix: number): string | undefined {
  if (!address) return undefined;
  const version = isIP(address);
  if (version === 4) return address;
  // IPv4 clients of a dual-stack listener, on every request: without the URL parser (5% of a lead's CPU).
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7);
  if (version !== 6 || address.includes('%')) return undefined;
  let keys = ipv6Keys.get(prefix);
  if (!keys) ipv6Keys.set(prefix, (keys = new Map()));
  let key = keys.get(address);
  if (key === undefined) {
    if (keys.size >= IPV6_KEY_CACHE_SIZE) keys.clear();
    keys.set(address, (key = ipv6Key(address, prefix)));
  }
  return key;
}

/** IPv6 keys already worked out, by prefix length: the same clients come back on every request. */
const ipv6Keys = new Map<number, Map<string, string>>();
const IPV6_KEY_CACHE_SIZE = 10_000;

function ipv6Key(address: string, prefix: number): string {
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  const masked = groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefix - 16 * i));
    return group & ((0xffff << (16 - bits)) & 0xffff);
  });
  const canonical = canonicalIpv6(masked.map((group) => group.toString(16)).join(':'));
  return prefix === 128 ? canonical : `${canonical}/${prefix}`;
}

/** The WHATWG URL parser writes IPv6 the RFC 5952 way (lower case, no leading zeros, the first longest zero run as ::). */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** The eight 16-bit groups of a valid IPv6 address (embedded IPv4 included: the URL parser writes it as two groups). */
function ipv6Groups(address: string): number[] {
  const [head, tail] = canonicalIpv6(address).split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
