import { CONTRACT } from '../../test/support/contract.js';
import { ERROR_CATALOG } from './error-catalog.js';

/**
 * The contract's error codes against the catalog. Every error response of every operation is a problem that pins the
 * codes it can carry (a `code` const or enum), or a protocol error of its own; each pinned code is in the catalog with
 * that response's status; its examples carry one of those codes; every catalog code is documented somewhere.
 */

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PROBLEM = '#/components/schemas/Problem';
/** Errors that are not problems: JSON-RPC errors of the MCP transport, GraphQL responses that could not execute. */
const PROTOCOL_ERRORS = ['#/components/schemas/JsonRpcErrorResponse', '#/components/schemas/GraphQLResponse'];
/** The inbox's error page: the same problem, as a page in the person's language, beside its application/problem+json. */
const ERROR_PAGE = '#/components/schemas/InboxErrorPage';
/**
 * A page shown again with what was refused marked beside its field (an inbox form, the filters of a list), or a
 * person's page that answers a refusal in words (a wrong code, an ended claim).
 */
const PAGES_AGAIN = ['#/components/schemas/InboxHtml', '#/components/schemas/PersonHtml'];
const CATALOG: Record<string, number> = Object.fromEntries(Object.entries(ERROR_CATALOG).map(([code, entry]) => [code, entry.status]));

function resolve(node: Json): Json {
  if (!node?.$ref) return node;
  const target = (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json | undefined, token: string) => at?.[token.replace(/~1/g, '/').replace(/~0/g, '~')], CONTRACT);
  if (target === undefined) throw new Error(`unresolved ${node.$ref}`);
  return resolve(target);
}

/** The $refs a schema is made of: itself and, through allOf, its parts, transitively. */
function madeOf(schema: Json): string[] {
  return [...(schema?.$ref ? [schema.$ref as string] : []), ...(resolve(schema)?.allOf ?? []).flatMap(madeOf)];
}

/** The codes a problem schema allows: every `code` const or enum it (or a schema it is made of) states must hold. */
function codesOf(schema: Json): string[] | undefined {
  const resolved = resolve(schema);
  const own = resolved.properties?.code;
  const constraints = [own?.const !== undefined ? [own.const] : own?.enum, ...(resolved.allOf ?? []).map(codesOf)].filter(Boolean) as string[][];
  return constraints.length ? constraints.reduce((allowed, next) => allowed.filter((code) => next.includes(code))) : undefined;
}

interface Documented {
  where: string;
  /** The status of an operation's response; undefined for a component, which has none of its own. */
  status?: number;
  response: Json;
}

const operations: Documented[] = Object.entries(CONTRACT.paths as Json).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).flatMap((method) =>
    Object.entries(item[method].responses as Json)
      .filter(([status]) => /^[45]\d\d$/.test(status))
      .map(([status, response]) => ({ where: `${method.toUpperCase()} ${path} ${status}`, status: Number(status), response: resolve(response) })),
  ),
);
// Problems answered before routing (a slow or oversized request, on any path) are documented once, as components.
const components: Documented[] = Object.entries(CONTRACT.components.responses as Json).map(([name, response]) => ({
  where: `components.responses.${name}`,
  response,
}));

/** Each media type of each documented error: its schema's codes, or why it has none. */
const media = [...operations, ...components].flatMap(({ where, status, response }) =>
  Object.entries((response.content ?? {}) as Json).map(([mediaType, content]) => ({
    where: `${where} ${mediaType}`,
    status,
    content: content as Json,
    problem: madeOf(content.schema).includes(PROBLEM),
    protocol: madeOf(content.schema).some((ref) => PROTOCOL_ERRORS.includes(ref)),
    page:
      madeOf(content.schema).some((ref) => PAGES_AGAIN.includes(ref)) ||
      (madeOf(content.schema).includes(ERROR_PAGE) && Boolean((response.content as Json)['application/problem+json'])),
    codes: codesOf(content.schema ?? {}),
  })),
);
const problems = media.filter((entry) => entry.problem);

function examplesOf(content: Json): [string, Json][] {
  const named = Object.entries((content.examples ?? {}) as Json).map(([name, example]) => [name, resolve(example).value] as [string, Json]);
  return content.example === undefined ? named : [...named, ['example', content.example]];
}

describe('the error codes of the contract', () => {
  it('sees the error responses of the operations', () => {
    expect(operations.length).toBeGreaterThan(Object.keys(CONTRACT.paths).length);
    expect(problems.length).toBeGreaterThan(operations.length);
  });

  it('documents every error of an operation as a problem, or as a JSON-RPC or GraphQL error (or an inbox page of a problem)', () => {
    const neither = media.filter((entry) => entry.status !== undefined && !entry.problem && !entry.protocol && !entry.page).map((entry) => entry.where);
    expect(neither).toEqual([]);
  });

  it('pins the codes of every problem response (a code const or enum)', () => {
    expect(problems.filter((entry) => !entry.codes?.length).map((entry) => entry.where)).toEqual([]);
  });

  it("puts each pinned code in the catalog with the response's status (one status per component response)", () => {
    const wrong = problems.flatMap(({ where, status, codes = [] }) => {
      const expected = status ?? CATALOG[codes[0]];
      return codes.filter((code) => CATALOG[code] !== expected).map((code) => `${where}: ${code} is ${CATALOG[code] ?? 'not in the catalog'}, not ${expected}`);
    });
    expect(wrong).toEqual([]);
  });

  it('gives problem examples one of the pinned codes and the status', () => {
    const wrong = problems.flatMap(({ where, status, codes = [], content }) =>
      examplesOf(content)
        .filter(([, value]) => !codes.includes(value.code) || value.status !== (status ?? CATALOG[value.code]))
        .map(([name, value]) => `${where} example ${name}: ${value.status} ${value.code}`),
    );
    expect(wrong).toEqual([]);
  });

  it('documents every catalog code for some operation, or as a problem answered before routing', () => {
    const documented = new Set(problems.flatMap((entry) => entry.codes ?? []));
    expect(Object.keys(CATALOG).filter((code) => !documented.has(code))).toEqual([]);
  });

  it('lists exactly the catalog in ErrorCode, with the status of each code as the catalog has it', () => {
    const errorCode = CONTRACT.components.schemas.ErrorCode;
    expect([...errorCode.enum].sort()).toEqual(Object.keys(CATALOG).sort());
    // The description reads "Status by code: 400 `a`, `b`; 401 `c`; …": each code takes the status written before it.
    const stated: Record<string, number> = {};
    let current = 0;
    for (const [, status, code] of (errorCode.description as string).matchAll(/\b(\d{3})\b|`([a-z_]+)`/g)) {
      if (status) current = Number(status);
      else stated[code] = current;
    }
    expect(stated).toEqual(CATALOG);
  });
});
