import { BODY_LIMIT_BYTES } from '../../../src/server/http-limits.js';
import type { Call } from './http-client.js';

/**
 * Scenario 7's corpus: for every string field of every surface (REST, the agent registration, the OAuth forms, GraphQL
 * variables, MCP arguments, and the Idempotency-Key and Authorization headers), values built to make a validator work
 * hard — whitespace padding, combining marks, surrogates, repeated delimiters, digit runs with a bad end, nesting to the
 * depth limit, many keys — each grown as far as the body limit allows, so that it reaches the validators (a 413 would
 * test nothing).
 */

export { BODY_LIMIT_BYTES };
/** Node refuses a header section over 16 KiB with 431 before the service sees it; a value this long still gets in. */
const HEADER_VALUE_BYTES = 15 * 1024;
/** GraphQL refuses a query text over 8192 characters before parsing it: a query body this long is parsed. */
const GRAPHQL_QUERY_BYTES = 8192;
const MAX_JSON_DEPTH = 32;

export interface HostileCall extends Call {
  surface: string;
  field: string;
  variant: string;
}

/** A hostile value built from a repeat count `n`; `escape` sends every non-ASCII UTF-16 unit as a JSON \u escape. */
interface Variant {
  name: string;
  value: (n: number) => unknown;
  escape?: boolean;
  /** Fixed size (nesting): `n` is ignored. */
  fixed?: boolean;
}

const WHITESPACE: Record<string, string> = { space: ' ', tab: '\t', nbsp: '\u00a0', 'ideographic space': '\u3000' };
/** The telefone value that once froze the event loop and an e-mail-shaped one: plausible, with one bad character at the end. */
const CORES = ['12345678x', 'ana.souza@exemplo.com.br!'];
const DELIMITERS = ['@', '.', '-', '(', ')', '+', '"', "'", '\\', ' ', ','];

function variants(short: boolean, fieldDepth: number): Variant[] {
  const list: Variant[] = [];
  const positions: Record<string, (pad: string, core: string) => string> = {
    before: (pad, core) => pad + core,
    after: (pad, core) => core + pad,
    around: (pad, core) => pad + core + pad,
    inside: (pad, core) => core.slice(0, 4) + pad + core.slice(4),
  };
  for (const [wsName, ws] of Object.entries(WHITESPACE)) {
    for (const [position, place] of Object.entries(positions)) {
      // Short mode: every whitespace and every position, but not every pairing with every core.
      const cores = short ? [CORES[(Object.keys(positions).indexOf(position) + Object.keys(WHITESPACE).indexOf(wsName)) % CORES.length]] : CORES;
      for (const core of cores) list.push({ name: `${wsName} ${position} ${JSON.stringify(core)}`, value: (n) => place(ws.repeat(n), core) });
    }
  }
  list.push(
    { name: 'mixed whitespace before "12345678x"', value: (n) => ' \t\u00a0\u3000'.repeat(n) + '12345678x' },
    { name: 'combining marks on one letter', value: (n) => 'a' + '\u0301'.repeat(n) },
    { name: 'combining marks alone', value: (n) => '\u0301\u0308'.repeat(n) },
    { name: 'letter + combining mark, repeated, then "!"', value: (n) => 'e\u0301'.repeat(n) + '!' },
    { name: 'lone high surrogates', value: (n) => '\ud800'.repeat(n), escape: true },
    { name: 'lone low surrogates', value: (n) => '\udc00'.repeat(n), escape: true },
    { name: 'paired surrogates', value: (n) => '\u{1f600}'.repeat(n), escape: true },
    { name: 'letters and lone surrogates', value: (n) => 'a\ud83d'.repeat(n) + '\ude00', escape: true },
    { name: 'tag characters', value: (n) => 'a' + '\u{e0041}'.repeat(n), escape: true },
  );
  for (const d of DELIMITERS) {
    const shown = JSON.stringify(d);
    list.push({ name: `${shown} repeated`, value: (n) => d.repeat(n) });
    list.push({ name: `"a"${shown} repeated, then "!"`, value: (n) => `a${d}`.repeat(n) + '!' });
    if (!short) list.push({ name: `"1"${shown} repeated, then "x"`, value: (n) => `1${d}`.repeat(n) + 'x' });
  }
  list.push(
    { name: 'local part of "a." runs', value: (n) => 'a.'.repeat(n) + '@exemplo.com!' },
    { name: 'domain of "b." runs', value: (n) => 'a@' + 'b.'.repeat(n) + 'c!' },
    { name: 'domain of "b-" runs', value: (n) => 'a@' + 'b-'.repeat(n) + '.c' },
    { name: 'long local part and domain', value: (n) => 'a'.repeat(n) + '@' + 'b'.repeat(n) },
    { name: 'many @', value: (n) => 'a@b.'.repeat(n) + 'c@' },
    { name: 'digits then "x"', value: (n) => '1'.repeat(n) + 'x' },
    { name: '"+" digits then "x"', value: (n) => '+' + '1'.repeat(n) + 'x' },
    { name: '"1 " runs then "x"', value: (n) => '1 '.repeat(n) + 'x' },
    { name: '"(1)" runs then "x"', value: (n) => '(1)'.repeat(n) + 'x' },
    { name: '"1-" runs then "("', value: (n) => '1-'.repeat(n) + '(' },
    // The container holding the value counts towards the depth: this one reaches the limit exactly, the next passes it.
    { name: `arrays nested to the depth limit`, value: () => nest(MAX_JSON_DEPTH - fieldDepth, 'x'), fixed: true },
    { name: `arrays nested past the depth limit`, value: () => nest(MAX_JSON_DEPTH - fieldDepth + 1, 'x'), fixed: true },
    { name: 'objects nested to the depth limit', value: () => nestObjects(MAX_JSON_DEPTH - fieldDepth, 'x'), fixed: true },
    { name: 'an object of many keys', value: (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, ''])) },
    { name: 'an array of many strings', value: (n) => Array.from({ length: n }, () => ' 1') },
  );
  return list;
}

const nest = (depth: number, leaf: unknown): unknown => (depth <= 0 ? leaf : [nest(depth - 1, leaf)]);
const nestObjects = (depth: number, leaf: unknown): unknown => (depth <= 0 ? leaf : { a: nestObjects(depth - 1, leaf) });

/** JSON with every non-ASCII UTF-16 unit as a \u escape: how lone and paired surrogates are sent. */
const asciiJson = (value: unknown) => JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A surface: where a field's value goes in a request. */
interface Surface {
  name: string;
  fields: string[];
  /** How deep a field's value sits in the body (the body itself is depth 1). */
  depth: number;
  build(field: string, value: unknown, json: (body: unknown) => string): Call;
  /** A header surface: the value must be a header value (Latin-1, no controls) and is sized to the header limit. */
  header?: boolean;
  /** A field with a lower limit of its own than the body's, in body bytes. */
  limits?: Record<string, number>;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };
const LEAD = {
  nome: 'Ana Souza',
  email: 'ana.souza@exemplo.com.br',
  telefone: '+55 11 98765-4321',
  empresa: 'Souza & Filhos',
  mensagem: 'Olá',
  origem: 'site',
};
const LEAD_FIELDS = Object.keys(LEAD);
const MCP_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'reliability', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * A 2026-07-28 request, whose Mcp-Name header must repeat the name in the body; without `name`, a 2025-11-25 one (no
 * such header), for a hostile resource URI that a header could not carry.
 */
function mcp(method: string, name: string | undefined, params: Record<string, unknown>, json: (body: unknown) => string): Call {
  if (name === undefined) {
    return {
      method: 'POST',
      path: '/mcp',
      headers: { ...JSON_TYPE, Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
      body: json({ jsonrpc: '2.0', id: 1, method, params }),
    };
  }
  return {
    method: 'POST',
    path: '/mcp',
    headers: { ...JSON_TYPE, Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, 'Mcp-Name': name },
    body: json({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MCP_META } }),
  };
}

const form = (params: Record<string, unknown>) => ({
  method: 'POST' as const,
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString(),
});

const SURFACES: Surface[] = [
  ...['/api/v1/lead', '/api/v1/sandbox'].map((path): Surface => ({
    name: `POST ${path}`,
    fields: LEAD_FIELDS,
    depth: 1,
    build: (field, value, json) => ({ method: 'POST', path, headers: JSON_TYPE, body: json({ ...LEAD, [field]: value }) }),
  })),
  {
    name: 'POST /api/v1/agent/identity (anonymous)',
    fields: ['type', 'client_name', 'contacts/0'],
    depth: 1,
    build: (field, value, json) => {
      const body: Record<string, unknown> = { type: 'anonymous', client_name: 'reliability', contacts: ['ops@exemplo.com.br'] };
      if (field === 'contacts/0') body.contacts = [value];
      else body[field] = value;
      return { method: 'POST', path: '/api/v1/agent/identity', headers: JSON_TYPE, body: json(body) };
    },
  },
  {
    name: 'POST /api/v1/agent/identity (identity_assertion)',
    fields: ['assertion', 'assertion_type'],
    depth: 1,
    build: (field, value, json) => ({
      method: 'POST',
      path: '/api/v1/agent/identity',
      headers: JSON_TYPE,
      body: json({ type: 'identity_assertion', assertion_type: 'verified_email', assertion: 'ops@exemplo.com.br', [field]: value }),
    }),
  },
  {
    name: 'POST /oauth2/token (form)',
    fields: ['grant_type', 'assertion', 'scope', 'client_id'],
    depth: 1,
    build: (field, value) => ({ path: '/oauth2/token', ...form({ grant_type: JWT_BEARER, assertion: 'e30.e30.e30', [field]: value }) }),
  },
  {
    name: 'POST /oauth2/revoke (form)',
    fields: ['token', 'token_type_hint'],
    depth: 1,
    build: (field, value) => ({ path: '/oauth2/revoke', ...form({ token: 'e30.e30.e30', [field]: value }) }),
  },
  {
    name: 'POST /api/v1/graphql',
    fields: ['docs(search:)', 'doc(slug:)', 'query'],
    depth: 2,
    limits: { query: GRAPHQL_QUERY_BYTES },
    build: (field, value, json) => {
      const body =
        field === 'docs(search:)'
          ? { query: 'query($s: String) { docs(search: $s) { slug } }', variables: { s: value } }
          : field === 'doc(slug:)'
            ? { query: 'query($s: String!) { doc(slug: $s) { slug } }', variables: { s: value } }
            : { query: value };
      return { method: 'POST', path: '/api/v1/graphql', headers: JSON_TYPE, body: json(body) };
    },
  },
  ...['validate_lead', 'submit_lead'].map((tool): Surface => ({
    name: `MCP tools/call ${tool}`,
    fields: LEAD_FIELDS,
    depth: 4,
    build: (field, value, json) => mcp('tools/call', tool, { name: tool, arguments: { ...LEAD, [field]: value } }, json),
  })),
  {
    name: 'MCP tools/call search_docs, get_doc',
    fields: ['search_docs query', 'get_doc slug'],
    depth: 4,
    build: (field, value, json) =>
      field === 'get_doc slug'
        ? mcp('tools/call', 'get_doc', { name: 'get_doc', arguments: { slug: value } }, json)
        : mcp('tools/call', 'search_docs', { name: 'search_docs', arguments: { query: value } }, json),
  },
  {
    name: 'MCP prompts/get, resources/read',
    fields: ['capture_lead contexto', 'resources/read uri'],
    depth: 4,
    build: (field, value, json) =>
      field === 'resources/read uri'
        ? mcp('resources/read', undefined, { uri: typeof value === 'string' ? `leads://docs/${value}` : value }, json)
        : mcp('prompts/get', 'capture_lead', { name: 'capture_lead', arguments: { contexto: value } }, json),
  },
  {
    name: 'headers',
    fields: ['Idempotency-Key', 'Authorization: Bearer …', 'Authorization'],
    depth: 0,
    header: true,
    build: (field, value) => {
      const text = String(value);
      if (field === 'Idempotency-Key')
        return { method: 'POST', path: '/api/v1/lead', headers: { ...JSON_TYPE, 'Idempotency-Key': text }, body: JSON.stringify(LEAD) };
      const authorization = field === 'Authorization' ? text : `Bearer ${text}`;
      return { method: 'POST', path: '/api/v1/sandbox', headers: { ...JSON_TYPE, Authorization: authorization }, body: JSON.stringify(LEAD) };
    },
  },
];

/** A header value Node's client can send: Latin-1 without controls other than tab. */
const HEADER_SAFE = /^[\t\x20-\x7e\u0080-\u00ff]*$/;

/**
 * The size a call has: body bytes, or for a header surface the header value's bytes. Undefined: the value cannot be
 * sent on that surface (a header value that is not Latin-1, a non-string header).
 */
function sizeOf(surface: Surface, field: string, variant: Variant, n: number): { call: Call; bytes: number } | undefined {
  const value = variant.value(n);
  const json = variant.escape ? asciiJson : JSON.stringify;
  if (surface.header) {
    if (typeof value !== 'string' || !HEADER_SAFE.test(value)) return undefined;
    // Node's client sends a header string as UTF-8, so a Latin-1 letter above 0x7f takes two bytes.
    return { call: surface.build(field, value, json), bytes: Buffer.byteLength(value) };
  }
  const call = surface.build(field, value, json);
  return { call, bytes: Buffer.byteLength(call.body ?? '') };
}

/**
 * The largest `n` that keeps the call within its limit. Sizes grow by a constant per step of `n`, so two probes give
 * the slope; the few that do not (escaping) are stepped down until they fit.
 */
function largest(surface: Surface, field: string, variant: Variant): Call | undefined {
  const limit = surface.header ? HEADER_VALUE_BYTES : (surface.limits?.[field] ?? BODY_LIMIT_BYTES);
  const one = sizeOf(surface, field, variant, 1);
  if (!one) return undefined;
  if (variant.fixed) return one.bytes <= limit ? one.call : undefined;
  const two = sizeOf(surface, field, variant, 2)!;
  const slope = Math.max(1, two.bytes - one.bytes);
  let n = Math.max(1, Math.floor((limit - one.bytes) / slope) + 1);
  for (;;) {
    const sized = sizeOf(surface, field, variant, n)!;
    if (sized.bytes <= limit) return sized.call;
    if (n === 1) return undefined;
    n = Math.max(1, n - Math.ceil((sized.bytes - limit) / slope));
  }
}

/** One ordinary call per field of every surface: what warms a fresh service up before the corpus is measured. */
export function benignCalls(): Call[] {
  return SURFACES.flatMap((surface) => surface.fields.map((field) => surface.build(field, surface.header ? 'reliability-warm-up' : 'Ana', JSON.stringify)));
}

/** Every (surface, field, variant) that can be sent, grown to the limit; short mode samples the whitespace pairings. */
export function hostileCorpus({ short }: { short: boolean }): HostileCall[] {
  const calls: HostileCall[] = [];
  for (const surface of SURFACES) {
    for (const field of surface.fields) {
      for (const variant of variants(short, surface.depth)) {
        const call = largest(surface, field, variant);
        if (call) calls.push({ ...call, surface: surface.name, field, variant: variant.name });
      }
    }
  }
  return calls;
}
