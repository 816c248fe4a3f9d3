import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may go (decision 0027, Server-side request forgery): only global unicast addresses, so that a URL
 * someone types cannot make this service post to itself, its network or its cloud's metadata service.
 */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** What `WEBHOOKS_ALLOW_PRIVATE=true` opens, for development and tests. Everything else stays refused. */
const PRIVATE_CLASSES = new Set(['private', 'loopback', 'link-local', 'unique-local', 'carrier-grade-nat']);

/**
 * Instance metadata services, which hand out cloud credentials: AWS, GCP, Azure and OpenStack (169.254.169.254, and
 * AWS's IPv6 fd00:ec2::254), AWS ECS task credentials (169.254.170.2), Alibaba (100.100.100.200), Oracle
 * (192.0.0.192) and Azure's WireServer (168.63.129.16, a public address only Azure hosts can reach, so no range
 * catches it). Refused even with private targets allowed: a development setting must not open a credential store.
 */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', '168.63.129.16', ipaddr.parse('fd00:ec2::254').toString()]);

const ALLOWED: AddressVerdict = { allowed: true };
const refused = (reason: string): AddressVerdict => ({ allowed: false, reason });

/**
 * Whether a connection to this address is allowed. Only the canonical text forms are accepted (dotted decimal for
 * IPv4, as DNS answers and the URL parser give them): `127.1` or `0x7f000001` are refused, not guessed at, and so is
 * an IPv6 zone id (`fe80::1%eth0`), which names an interface of this host.
 */
export function checkAddress(ip: string, allowPrivate: boolean): AddressVerdict {
  if (ip.includes('%')) return refused('zone-id');
  const family = isIP(ip);
  if (family === 4) return checkIPv4(ipaddr.IPv4.parse(ip), allowPrivate);
  if (family === 6) return checkIPv6(ipaddr.IPv6.parse(hexadecimalIPv6(ip)), allowPrivate);
  return refused('invalid');
}

/**
 * An IPv6 address with no dotted IPv4 tail, as the URL parser writes it. ipaddr.js reads `::a.b.c.d` as
 * `::ffff:a.b.c.d`, but a socket connects to `::a.b.c.d` as the IPv4-compatible address it is.
 */
function hexadecimalIPv6(ip: string): string {
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

function checkIPv4(address: ipaddr.IPv4, allowPrivate: boolean): AddressVerdict {
  if (METADATA.has(address.toString())) return refused('metadata');
  const reason = ipv4Class(address);
  if (reason === null || (allowPrivate && PRIVATE_CLASSES.has(reason))) return ALLOWED;
  return refused(reason);
}

/** The class of a non-global IPv4 address, or null for global unicast. */
function ipv4Class(address: ipaddr.IPv4): string | null {
  const range: string = address.range();
  switch (range) {
    case 'unicast':
      return null;
    case 'linkLocal':
      return 'link-local';
    case 'carrierGradeNat':
      return 'carrier-grade-nat';
    case 'unspecified':
    case 'broadcast':
    case 'multicast':
    case 'loopback':
    case 'private':
      return range;
    default:
      // 'reserved' lumps the test networks with the rest; as112 and amt are anycast services, never a receiver.
      if (IPV4_DOCUMENTATION.some((net) => address.match(net))) return 'documentation';
      if (address.match(IPV4_BENCHMARKING)) return 'benchmarking';
      return 'reserved';
  }
}

const IPV4_DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
const IPV4_BENCHMARKING = ipaddr.IPv4.parseCIDR('198.18.0.0/15');
const IPV6_DOCUMENTATION = ['2001:db8::/32', '3fff::/20'].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** The IPv4 address in two 16-bit parts of an IPv6 address, optionally inverted (Teredo's client). */
function ipv4In(parts: number[], at: number, invert = false): ipaddr.IPv4 {
  const [high, low] = invert ? [parts[at] ^ 0xffff, parts[at + 1] ^ 0xffff] : [parts[at], parts[at + 1]];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The first refusal among the IPv4 addresses a form embeds, named after the form ('ipv4-mapped loopback'). */
function embedded(form: string, addresses: ipaddr.IPv4[], allowPrivate: boolean): AddressVerdict {
  for (const address of addresses) {
    const verdict = checkIPv4(address, allowPrivate);
    if (!verdict.allowed) return refused(`${form} ${verdict.reason}`);
  }
  return ALLOWED;
}

/** An embedded-IPv4 form refused whatever it carries: the reason names what it carries when that is refused too. */
function refusedForm(form: string, addresses: ipaddr.IPv4[], allowPrivate: boolean): AddressVerdict {
  const verdict = embedded(form, addresses, allowPrivate);
  return verdict.allowed ? refused(form) : verdict;
}

function checkIPv6(address: ipaddr.IPv6, allowPrivate: boolean): AddressVerdict {
  if (METADATA.has(address.toString())) return refused('metadata');
  const parts = address.parts;
  const range: string = address.range();
  switch (range) {
    // These reach the IPv4 they carry (the kernel maps the first; a NAT64 gateway translates the second), so they
    // are exactly as allowed as that IPv4.
    case 'ipv4Mapped':
      return embedded('ipv4-mapped', [ipv4In(parts, 6)], allowPrivate);
    case 'rfc6052':
      // The local-use prefix 64:ff9b:1::/48 (RFC 8215) is the operator's own, and where its IPv4 sits depends on a
      // prefix length we cannot see; no public receiver is reached through it.
      if (!address.match(NAT64_WELL_KNOWN)) return refused('nat64-local-use');
      return embedded('nat64', [ipv4In(parts, 6)], allowPrivate);
    // Refused outright: 6to4 (deprecated, RFC 7526) and Teredo send through relays to the IPv4s they embed, and a
    // receiver on either is a relic; IPv4-translated (SIIT, RFC 6145) addresses live only inside a translator's
    // network. Checking their IPv4s could only allow a path no webhook needs.
    case '6to4':
      return refusedForm('6to4', [ipv4In(parts, 1)], allowPrivate);
    case 'teredo':
      return refusedForm('teredo', [ipv4In(parts, 2), ipv4In(parts, 6, true)], allowPrivate);
    case 'rfc6145':
      return refusedForm('ipv4-translated', [ipv4In(parts, 6)], allowPrivate);
  }
  const reason = ipv6Class(address, range);
  if (reason === null || (allowPrivate && PRIVATE_CLASSES.has(reason))) return ALLOWED;
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291) may still be routed into an automatic tunnel to that IPv4.
  if (reason === 'ipv4-compatible') return refusedForm('ipv4-compatible', [ipv4In(parts, 6)], allowPrivate);
  return refused(reason);
}

/** The class of a non-global IPv6 address that embeds no IPv4 it is judged by, or null for global unicast. */
function ipv6Class(address: ipaddr.IPv6, range: string): string | null {
  switch (range) {
    case 'unicast':
      if (address.match(GLOBAL_UNICAST)) return null;
      return address.parts.slice(0, 6).every((part) => part === 0) ? 'ipv4-compatible' : 'reserved';
    case 'linkLocal':
      return 'link-local';
    case 'uniqueLocal':
      return 'unique-local';
    case 'deprecatedSiteLocal':
      return 'site-local';
    case 'unspecified':
    case 'multicast':
    case 'loopback':
    case 'benchmarking':
      return range;
    default:
      // 'reserved' holds the documentation prefixes; the rest (discard, ORCHID, AMT, AS112, …) are no receivers.
      return IPV6_DOCUMENTATION.some((net) => address.match(net)) ? 'documentation' : 'reserved';
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system's resolver (hosts file included), every address in the order it gives them. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export type UrlVerdict = { ok: true; url: URL } | { ok: false; code: string; detail: string };

/** Longer than any receiver's URL needs; it is stored, listed and logged. */
export const MAX_URL_LENGTH = 2048;

/**
 * Whether an endpoint's URL may be stored, when it is created or changed: https (or http with private targets
 * allowed), no credentials, no fragment, and a host whose every address the policy allows. Each attempt checks the
 * addresses again (WebhookHttpClient), since a name's answers change.
 */
export async function checkUrl(raw: string, options: { allowPrivate: boolean; resolver: Resolver }): Promise<UrlVerdict> {
  if (raw.length > MAX_URL_LENGTH) return fail('too_long', `The URL is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('invalid_url', 'The URL is not an absolute URL.');
  }
  if (!allowedScheme(url.protocol, options.allowPrivate)) {
    return fail('scheme_not_allowed', options.allowPrivate ? 'The URL must be https or http.' : 'The URL must be https.');
  }
  // A password would be stored with the URL and shown wherever the URL is.
  if (url.username !== '' || url.password !== '') return fail('credentials_not_allowed', 'The URL must not contain a user name or password.');
  // In a special URL a '#' can only start the fragment, which is never sent; an empty one leaves url.hash empty.
  if (url.href.includes('#')) return fail('invalid_url', 'The URL must not have a fragment: it is never sent.');
  // What is stored is the normalised URL, which percent-encoding and punycode can make several times longer.
  if (url.href.length > MAX_URL_LENGTH) return fail('too_long', `The URL, normalised, is longer than ${MAX_URL_LENGTH} characters.`);
  if (url.port === '0') return fail('invalid_url', 'The URL must not name port 0.');

  const host = url.hostname;
  const literal = literalAddress(host);
  if (literal !== null) {
    const verdict = checkAddress(literal, options.allowPrivate);
    return verdict.allowed ? { ok: true, url } : fail('address_not_allowed', `${host} is ${article(verdict.reason)} address.`);
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await options.resolver(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail('unresolvable_host', `${host} could not be resolved${code ? ` (${code})` : ''}.`);
  }
  if (addresses.length === 0) return fail('unresolvable_host', `${host} has no addresses.`);
  for (const { address } of addresses) {
    const verdict = checkAddress(address, options.allowPrivate);
    // The address itself is left out: the answer would otherwise map internal names for whoever asks.
    if (!verdict.allowed) return fail('address_not_allowed', `${host} resolves to ${article(verdict.reason)} address.`);
  }
  return { ok: true, url };
}

export function allowedScheme(protocol: string, allowPrivate: boolean): boolean {
  return protocol === 'https:' || (allowPrivate && protocol === 'http:');
}

/** The IP address a URL's host names literally (an IPv6 one without its brackets), or null for a name. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

function fail(code: string, detail: string): UrlVerdict {
  return { ok: false, code, detail };
}

function article(reason: string): string {
  return `${/^[aeiou]/.test(reason) ? 'an' : 'a'} ${reason}`;
}
