import { readFileSync } from 'node:fs';
import { buildClientSchema, buildSchema, getIntrospectionQuery, IntrospectionQuery, lexicographicSortSchema, printSchema } from 'graphql';
import { parseList } from 'structured-headers';
import type { Response } from 'supertest';
import { DocsService } from '../src/docs/docs.service.js';
import { settledWebhooks } from './support/webhook-receiver.js';
import { expectContract } from './support/contract.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Read-only GraphQL over health, site and docs (docs/decisions/0016-graphql-read-only-through-the-same-door.md): the
 * same data as REST through the same door (body rules, bearer guard, rate-limit tiers, problems), and every query
 * bounded: each refusal is a GraphQL error with its own message and `extensions.code`, never a 5xx and never a stack
 * trace.
 */

const PATH = '/api/v1/graphql';
const BASE = 'http://leads.test';
const JSON_UTF8 = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const GRAPHQL_RESPONSE_UTF8 = `${GRAPHQL_RESPONSE}; charset=utf-8`;
const PROBLEM = 'application/problem+json; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SCHEMA_FILE = 'src/graphql/schema.graphql';
const BODY_LIMIT = 32 * 1024;
const MAX_QUERY_LENGTH = 8192;

const HEALTH_QUERY =
  '{ health { status reasons version checks { database redis } outbox { channel pending oldest_pending_age_seconds } webhooks { pending oldest_pending_age_seconds } } }';
const SITE_QUERY = `{
  site {
    brand company phone
    address { street city region postal_code country }
    trial { days credit_card_required url }
    links { docs openapi errors versioning agents graphql mcp mcp_server_card cli }
  }
}`;
const DOC_FIELDS = 'slug title summary url markdown';

type Json = Record<string, any>;

/** `depth` levels of `... on Query { }` around `inner`: each inline fragment is one level for the depth limit. */
const nestedInQuery = (depth: number, inner: string): string => (depth === 0 ? inner : `... on Query { ${nestedInQuery(depth - 1, inner)} }`);

const unescapeHtml = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);

/** Every src= and href= value in an HTML document. */
const references = (html: string) => [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]);

function rateLimitPolicy(res: Response): string {
  const [[name]] = parseList(String(res.headers['ratelimit-policy']));
  return name as string;
}

/** No error of a GraphQL response carries a stack trace or other internals in its extensions. */
function expectNoStacktrace(body: Json): void {
  for (const error of body.errors ?? []) {
    expect(error.extensions ?? {}).not.toHaveProperty('stacktrace');
    expect(error.extensions ?? {}).not.toHaveProperty('exception');
    expect(JSON.stringify(error)).not.toMatch(/node_modules|\.ts:\d+|\bat \w+ \(/);
  }
}

describe('GraphQL: POST /api/v1/graphql', () => {
  let t: TestApp;
  let docs: DocsService;
  beforeAll(async () => {
    t = await startTestApp();
    docs = t.app.get(DocsService);
  });
  afterAll(() => t.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post(PATH)
      .set(headers)
      .send(body as object)
      .then(expectContract);
  const query = (text: string, variables?: Json, headers: Record<string, string> = {}) => post({ query: text, ...(variables ? { variables } : {}) }, headers);

  /** A successful execution: 200 application/json with `data` and no `errors`. */
  async function data(text: string, variables?: Json): Promise<Json> {
    const res = await query(text, variables);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  }

  /** A GraphQL error answer: one error with this message and code, no data, no stack trace. */
  function expectGraphqlError(res: Response, message: string | RegExp, code: string, status = 200, mediaType = JSON_UTF8): void {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(mediaType);
    expect(res.body).not.toHaveProperty('data');
    expect(res.body.errors.length).toBeGreaterThanOrEqual(1);
    const [error] = res.body.errors;
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
    expect(error.extensions.code).toBe(code);
    expectNoStacktrace(res.body);
  }

  function expectProblem(res: Response, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(PROBLEM);
    expect(res.body).toMatchObject({ status, code, type: `${BASE}/docs/errors#${code}`, instance: PATH });
    expect(res.body).not.toHaveProperty('data');
    expect(res.body).not.toHaveProperty('errors.0.message');
  }

  async function agentToken(): Promise<string> {
    const registered = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' }).then(expectContract);
    expect(registered.status).toBe(200);
    const token = await t.http
      .post('/oauth2/token')
      .type('form')
      .send({ grant_type: JWT_BEARER, assertion: registered.body.identity_assertion })
      .then(expectContract);
    expect(token.status).toBe(200);
    return token.body.access_token;
  }

  describe('queries: the same data as REST', () => {
    it('health equals the body of GET /api/v1/health', async () => {
      await settledWebhooks(() => t.http.get('/api/v1/health'));
      const rest = await t.http.get('/api/v1/health').then(expectContract);
      expect(rest.status).toBe(200);
      const { health } = await data(HEALTH_QUERY);
      // The schema always has the `redis` field; REST leaves it out when Redis is not configured.
      const outbox = Object.entries(rest.body.outbox).map(([channel, backlog]) => ({ channel, ...(backlog as object) }));
      expect(health).toEqual({ ...rest.body, reasons: null, outbox, checks: { redis: null, ...rest.body.checks } });
      expect(health.status).toBe('ok');
      const { health: without } = await data('{ health { status version checks { database } webhooks { pending oldest_pending_age_seconds } } }');
      const { outbox: _outbox, ...withoutOutbox } = rest.body;
      expect(without).toEqual(withoutOutbox);
    });

    it('site equals the body of GET /api/v1/info, every field', async () => {
      const rest = await t.http.get('/api/v1/info').then(expectContract);
      expect(rest.status).toBe(200);
      const { site } = await data(SITE_QUERY);
      expect(site).toStrictEqual(rest.body);
      expect(site.links.graphql).toBe(`${BASE}${PATH}`);
    });

    it('docs lists every documentation page, as DocsService publishes it, each url a 200 HTML page', async () => {
      const { docs: pages } = await data(`{ docs { ${DOC_FIELDS} } }`);
      const expected = docs.search().map(({ slug, title, summary, url, markdown }) => ({ slug, title, summary, url, markdown }));
      expect(pages).toStrictEqual(expected);
      expect(pages.map((p: Json) => p.slug)).toEqual(expect.arrayContaining(['errors', 'agents', 'quickstart', 'api-versioning']));
      for (const page of pages) {
        expect(page.url).toBe(`${BASE}/docs/${page.slug}`);
        const html = await t.http.get(new URL(page.url).pathname).then(expectContract);
        expect(html.status).toBe(200);
        expect(html.headers['content-type']).toBe(HTML);
        expect(html.text).toContain(`<title>${page.title.replace(/&/g, '&amp;')} · Leads API</title>`);
      }
    });

    it('docs(search) filters by title, summary or text, case-insensitively, as DocsService.search does', async () => {
      const all = (await data('{ docs { slug } }')).docs;
      for (const text of ['token', 'TOKEN', 'rate limit', 'rate_limited', 'deprecation']) {
        const { docs: found } = await data(`query Search($text: String) { docs(search: $text) { ${DOC_FIELDS} } }`, { text });
        expect(found.map((p: Json) => p.slug)).toEqual(docs.search(text).map((p) => p.slug));
        expect(found.length).toBeGreaterThan(0);
        expect(found.length).toBeLessThanOrEqual(all.length);
        for (const page of found) expect([page.title, page.summary, page.markdown].join('\n').toLowerCase()).toContain(text.toLowerCase());
      }
      // A literal argument works the same way; a narrow search narrows.
      const narrow = (await data('{ docs(search: "rate_limited") { slug } }')).docs;
      expect(narrow.map((p: Json) => p.slug)).toEqual(docs.search('rate_limited').map((p) => p.slug));
      expect(narrow.length).toBeLessThan(all.length);
      expect((await data('{ docs(search: "no page says zyxwvutsrq") { slug } }')).docs).toEqual([]);
      // No search text, an empty one, blanks or null: every page.
      for (const search of ['', '   ', null]) {
        expect((await data('query S($s: String) { docs(search: $s) { slug } }', { s: search })).docs).toEqual(all);
      }
    });

    it('doc(slug) is that page; an unknown slug is null, not an error', async () => {
      for (const page of docs.search()) {
        const { doc } = await data('query One($slug: String!) { doc(slug: $slug) { slug title summary url markdown } }', { slug: page.slug });
        expect(doc).toStrictEqual({ slug: page.slug, title: page.title, summary: page.summary, url: page.url, markdown: page.markdown });
      }
      expect(await data('{ doc(slug: "no-such-page") { slug } }')).toEqual({ doc: null });
      expect(await data('{ doc(slug: "../errors") { slug } }')).toEqual({ doc: null });
    });

    it('runs one named operation of several, with variables, and answers __typename', async () => {
      const res = await post({
        query: 'query A { health { status } } query B($slug: String!) { doc(slug: $slug) { __typename slug } }',
        operationName: 'B',
        variables: { slug: 'errors' },
        extensions: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { doc: { __typename: 'Doc', slug: 'errors' } } });
    });

    it('answers application/graphql-response+json when Accept asks for it', async () => {
      const res = await query('{ health { status } }', undefined, { Accept: GRAPHQL_RESPONSE });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(GRAPHQL_RESPONSE_UTF8);
      expect(JSON.parse(res.text)).toEqual({ data: { health: { status: 'ok' } } });
    });
  });

  describe('introspection', () => {
    it('answers the standard introspection query (as explorers send it) with the schema of src/graphql/schema.graphql', async () => {
      // specifiedByUrl too: the schema names the specification of its DateTime scalar (RFC 3339).
      const { __schema } = await data(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true }));
      expect(__schema.queryType.name).toBe('Query');
      expect(__schema.mutationType).toBeNull();
      expect(__schema.subscriptionType).toBeNull();
      const served = printSchema(lexicographicSortSchema(buildClientSchema({ __schema } as IntrospectionQuery)));
      const file = printSchema(lexicographicSortSchema(buildSchema(readFileSync(SCHEMA_FILE, 'utf8'))));
      expect(served).toBe(file);
    });

    it('answers __type and __typename', async () => {
      const { __type } = await data('{ __type(name: "Doc") { name kind fields { name type { kind name ofType { kind name } } } } }');
      expect(__type.name).toBe('Doc');
      expect(__type.kind).toBe('OBJECT');
      expect(__type.fields.map((f: Json) => f.name)).toEqual(['slug', 'title', 'summary', 'url', 'markdown']);
      expect(__type.fields[0].type).toEqual({ kind: 'NON_NULL', name: null, ofType: { kind: 'SCALAR', name: 'String' } });
      const query = (await data('{ __type(name: "Query") { fields { name args { name type { name kind } } } } }')).__type;
      expect(query.fields.map((f: Json) => f.name)).toEqual(['health', 'site', 'docs', 'doc', 'leads', 'lead']);
      expect(await data('{ __type(name: "Mutation") { name } }')).toEqual({ __type: null });
      expect(await data('{ __typename }')).toEqual({ __typename: 'Query' });
    });
  });

  describe('read-only and bounded: each refusal is a GraphQL error, never a 5xx', () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: health { status }`).join(' ')} }`;
    const padded = (length: number) => {
      const text = '{ health { status } }\n#';
      return text + 'x'.repeat(length - text.length);
    };
    /** n distinct fields of site (no aliases), each with its own @include(if: true). */
    const directives = (n: number) => {
      const on = (fields: string[]) => fields.map((f) => `${f} @include(if: true)`).join(' ');
      const fields = ['brand', 'company', 'phone', 'street', 'city', 'region', 'postal_code', 'country', 'days', 'credit_card_required', 'url'].slice(0, n);
      const top = fields.filter((f) => ['brand', 'company', 'phone'].includes(f));
      const address = fields.filter((f) => ['street', 'city', 'region', 'postal_code', 'country'].includes(f));
      const trial = fields.filter((f) => ['days', 'credit_card_required', 'url'].includes(f));
      return `{ site { ${on(top)} address { ${on(address)} } ${trial.length ? `trial { ${on(trial)} }` : ''} } }`;
    };
    const fragments = (n: number) => {
      // F1 spreads F2 … spreads Fn, which selects health { status }. graphql-armor counts each named spread as two levels
      // (the spread and the fragment's selection set), so n fragments make a depth of 2n + 2.
      const defs = Array.from({ length: n }, (_, i) =>
        i + 1 < n ? `fragment F${i + 1} on Query { ...F${i + 2} }` : `fragment F${n} on Query { health { status } }`,
      );
      return `{ ...F1 } ${defs.join(' ')}`;
    };

    /** [name, request body, message, extensions.code, status with Accept: application/graphql-response+json] */
    const refusals: [string, unknown, string | RegExp, string][] = [
      [
        'a mutation',
        { query: 'mutation { health { status } }' },
        'This GraphQL endpoint is read-only: mutations are not supported.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'a named mutation with variables',
        { query: 'mutation Submit($e: String) { lead(email: $e) { id } }', variables: { e: 'a@b.co' } },
        'This GraphQL endpoint is read-only: mutations are not supported.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'a subscription',
        { query: 'subscription { health { status } }' },
        'This GraphQL endpoint is read-only: subscriptions are not supported.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'a query of depth 7 (nested inline fragments)',
        { query: `{ ${nestedInQuery(5, 'health { status }')} }` },
        'Syntax Error: Query depth limit of 6 exceeded, found 7.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'a query of depth 9 (nested inline fragments, deeper object)',
        { query: `{ ${nestedInQuery(6, 'site { address { street } }')} }` },
        'Syntax Error: Query depth limit of 6 exceeded, found 9.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'a query of depth 8 (a chain of named fragments)',
        { query: fragments(3) },
        'Syntax Error: Query depth limit of 6 exceeded, found 8.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      ['11 aliases', { query: aliases(11) }, 'Syntax Error: Aliases limit of 10 exceeded, found 11.', 'GRAPHQL_VALIDATION_FAILED'],
      ['11 directives', { query: directives(11) }, 'Syntax Error: Directives limit of 10 exceeded, found 11.', 'GRAPHQL_VALIDATION_FAILED'],
      [
        'a costly query (one field repeated 340 times)',
        { query: `{ docs { ${'markdown '.repeat(340)}} }` },
        'Syntax Error: Query Cost limit of 500 exceeded, found 512.',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      [
        'more than 1000 tokens',
        { query: `{ health { ${'status '.repeat(1000)}} }` },
        /^Syntax Error: Document contains more th\w+ 1000 tokens\. Parsing aborted\.$/,
        'GRAPHQL_PARSE_FAILED',
      ],
      ['a query over 8192 characters', { query: padded(MAX_QUERY_LENGTH + 1) }, 'The query is longer than 8192 characters.', 'QUERY_TOO_LARGE'],
      [
        'a batch (JSON array)',
        [{ query: '{ health { status } }' }, { query: '{ site { brand } }' }],
        'Batched requests are not supported; send one operation per request.',
        'BATCHING_NOT_SUPPORTED',
      ],
      ['a batch of one', [{ query: '{ health { status } }' }], 'Batched requests are not supported; send one operation per request.', 'BATCHING_NOT_SUPPORTED'],
      ['an empty batch', [], 'Batched requests are not supported; send one operation per request.', 'BATCHING_NOT_SUPPORTED'],
      [
        'a persisted-query hash without the text (APQ)',
        { extensions: { persistedQuery: { version: 1, sha256Hash: 'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38' } } },
        'Persisted queries are not supported; send the query text.',
        'PERSISTED_QUERY_NOT_SUPPORTED',
      ],
      [
        'a persisted-query hash with the text',
        { query: '{ health { status } }', extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } },
        'Persisted queries are not supported; send the query text.',
        'PERSISTED_QUERY_NOT_SUPPORTED',
      ],
      ['an unknown field', { query: '{ users { id } }' }, 'Cannot query field "users" on type "Query".', 'GRAPHQL_VALIDATION_FAILED'],
      ['an unknown argument', { query: '{ docs(limit: 1000) { slug } }' }, 'Unknown argument "limit" on field "Query.docs".', 'GRAPHQL_VALIDATION_FAILED'],
      [
        'a missing selection',
        { query: '{ site }' },
        'Field "site" of type "Site!" must have a selection of subfields. Did you mean "site { ... }"?',
        'GRAPHQL_VALIDATION_FAILED',
      ],
      ['a syntax error', { query: '{ health { status ' }, 'Syntax Error: Expected Name, found <EOF>.', 'GRAPHQL_PARSE_FAILED'],
      ['an empty query', { query: '' }, 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.', 'BAD_REQUEST'],
      [
        'a variable of the wrong type',
        { query: 'query S($t: String) { docs(search: $t) { slug } }', variables: { t: 5 } },
        'Variable "$t" got invalid value 5; String cannot represent a non string value: 5',
        'BAD_USER_INPUT',
      ],
      [
        'a missing required variable',
        { query: 'query One($slug: String!) { doc(slug: $slug) { slug } }' },
        'Variable "$slug" of required type "String!" was not provided.',
        'BAD_USER_INPUT',
      ],
      [
        'several operations without operationName',
        { query: 'query A { health { status } } query B { site { brand } }' },
        'Must provide operation name if query contains multiple operations.',
        'OPERATION_RESOLUTION_FAILURE',
      ],
      [
        'an operationName that is not in the document',
        { query: 'query A { health { status } }', operationName: 'B' },
        'Unknown operation named "B".',
        'OPERATION_RESOLUTION_FAILURE',
      ],
    ];

    it.each(refusals)('refuses %s: 200 application/json with the error', async (_name, body, message, code) => {
      expectGraphqlError(await post(body), message, code);
    });

    it.each(refusals)('refuses %s: 400 application/graphql-response+json when Accept asks for it', async (_name, body, message, code) => {
      const res = await post(body, { Accept: GRAPHQL_RESPONSE });
      expectGraphqlError(res, message, code, 400, GRAPHQL_RESPONSE_UTF8);
    });

    it('with Accept listing both media types, answers in the one the client prefers', async () => {
      const json = await post({ query: '{ users }' }, { Accept: `${GRAPHQL_RESPONSE};q=0.5, application/json` });
      expectGraphqlError(json, 'Cannot query field "users" on type "Query".', 'GRAPHQL_VALIDATION_FAILED');
      const gql = await post([], { Accept: `application/json;q=0.5, ${GRAPHQL_RESPONSE}` });
      expectGraphqlError(gql, /Batched requests/, 'BATCHING_NOT_SUPPORTED', 400, GRAPHQL_RESPONSE_UTF8);
    });

    it('lets through what is within every limit: depth 6, 10 aliases, 8192 characters, 10 directives', async () => {
      // The schema itself is at most 3 levels deep (site { address { street } }); fragments make up the rest.
      expect(await data(`{ ${nestedInQuery(4, 'health { status }')} }`)).toEqual({ health: { status: 'ok' } });
      expect(await data(`{ ${nestedInQuery(3, 'site { address { street } }')} }`)).toEqual({ site: { address: { street: expect.any(String) } } });
      expect(await data(fragments(2))).toEqual({ health: { status: 'ok' } });
      const ten = await data(aliases(10));
      expect(Object.keys(ten)).toHaveLength(10);
      expect(await data(padded(MAX_QUERY_LENGTH))).toEqual({ health: { status: 'ok' } });
      expect(JSON.stringify(await data(directives(10))).match(/":"|":\d|":(true|false)/g)).toHaveLength(10);
      // Without markdown: ten copies of every page's text is an answer-size question (below), which grows with the docs.
      expect(await data(`{ ${Array.from({ length: 10 }, (_, i) => `a${i}: docs { slug title summary url }`).join(' ')} }`)).toHaveProperty('a9');
    });

    it('refuses a mutation even when the query also has a query operation, and never runs it', async () => {
      const res = await post({ query: 'query Q { health { status } } mutation M { health { status } }', operationName: 'Q' });
      expectGraphqlError(res, 'This GraphQL endpoint is read-only: mutations are not supported.', 'GRAPHQL_VALIDATION_FAILED');
    });
  });

  describe('transport: problems, as on every REST endpoint', () => {
    it('answers 400 malformed_json for a body that is not JSON', async () => {
      const res = await t.http.post(PATH).set('Content-Type', 'application/json').send('{"query": "{ health { status } }"').then(expectContract);
      expectProblem(res, 400, 'malformed_json');
    });

    it('answers 400 malformed_json for an empty body', async () => {
      expectProblem(await t.http.post(PATH).set('Content-Type', 'application/json').send('').then(expectContract), 400, 'malformed_json');
    });

    it('answers 400 body_not_object for a JSON scalar', async () => {
      expectProblem(
        await t.http.post(PATH).set('Content-Type', 'application/json').send('"{ health { status } }"').then(expectContract),
        400,
        'body_not_object',
      );
    });

    it.each([
      ['text/plain', '{"query":"{ health { status } }"}'],
      ['application/x-www-form-urlencoded', 'query=%7B%20health%20%7B%20status%20%7D%20%7D'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ health { status } }\r\n--x--\r\n'],
      ['application/graphql', '{ health { status } }'],
    ])('answers 415 unsupported_media_type for %s (a cross-site form cannot run a query)', async (type, body) => {
      const res = await t.http.post(PATH).set('Content-Type', type).send(body).then(expectContract);
      expectProblem(res, 415, 'unsupported_media_type');
    });

    it('answers 413 payload_too_large for a body over 32 KiB, and accepts 32 KiB exactly', async () => {
      const over = JSON.stringify({ query: `{ health { status } } #${'x'.repeat(BODY_LIMIT)}` });
      expectProblem(await t.http.post(PATH).set('Content-Type', 'application/json').send(over).then(expectContract), 413, 'payload_too_large');
      // 32 KiB is a body the transport takes; the query inside is then too long for GraphQL.
      const envelope = (pad: string) => JSON.stringify({ query: '{ health { status } }', variables: { pad } });
      const exact = envelope('x'.repeat(BODY_LIMIT - envelope('').length));
      expect(Buffer.byteLength(exact)).toBe(BODY_LIMIT);
      const res = await t.http.post(PATH).set('Content-Type', 'application/json').send(exact).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { health: { status: 'ok' } } });
    });

    it('answers 422 validation_failed with a pointer for a wrong envelope', async () => {
      const cases: [unknown, [string, string][]][] = [
        [{}, [['/query', 'required']]],
        [{ variables: {} }, [['/query', 'required']]],
        [{ query: { health: 'status' } }, [['/query', 'invalid_type']]],
        [{ query: null }, [['/query', 'invalid_type']]],
        [{ query: '{ health { status } }', operationName: 5 }, [['/operationName', 'invalid_type']]],
        [{ query: '{ health { status } }', variables: [1] }, [['/variables', 'invalid_type']]],
        [{ query: '{ health { status } }', variables: '{}' }, [['/variables', 'invalid_type']]],
        [{ query: '{ health { status } }', extensions: 'x' }, [['/extensions', 'invalid_type']]],
        [
          { query: 1, operationName: [], variables: 2, extensions: true },
          [
            ['/query', 'invalid_type'],
            ['/operationName', 'invalid_type'],
            ['/variables', 'invalid_type'],
            ['/extensions', 'invalid_type'],
          ],
        ],
      ];
      for (const [body, errors] of cases) {
        for (const accept of ['application/json', GRAPHQL_RESPONSE]) {
          const res = await post(body, { Accept: accept });
          expectProblem(res, 422, 'validation_failed');
          expect(res.body.errors.map((e: Json) => [e.pointer, e.code])).toEqual(errors);
        }
      }
    });

    it('answers 401 invalid_token with the challenge for a bad bearer token, and no data', async () => {
      for (const authorization of ['Bearer not-a-token', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.']) {
        const res = await query('{ health { status } }', undefined, { Authorization: authorization });
        expectProblem(res, 401, 'invalid_token');
        expect(res.headers['www-authenticate']).toBe(`Bearer error="invalid_token", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`);
      }
    });

    it('runs the query for a valid agent token under the "agent" policy, and for no token under "anonymous"', async () => {
      const token = await agentToken();
      const agent = await query('{ health { status } }', undefined, { Authorization: `Bearer ${token}` });
      expect(agent.status).toBe(200);
      expect(agent.body).toEqual({ data: { health: { status: 'ok' } } });
      expect(rateLimitPolicy(agent)).toBe('agent');
      // The agent's own budget first; its registering address's shared ceiling follows.
      expect(agent.headers.ratelimit).toMatch(/^"agent";r=\d+;t=\d+, "agent_per_address";r=\d+;t=\d+$/);
      const anonymous = await query('{ health { status } }');
      expect(anonymous.status).toBe(200);
      expect(rateLimitPolicy(anonymous)).toBe('anonymous');
      // A GraphQL error is still a rate-limited answer.
      const refused = await query('mutation { health { status } }');
      expect(rateLimitPolicy(refused)).toBe('anonymous');
    });
  });

  describe('GET /api/v1/graphql: the explorer page, never an execution', () => {
    it('is HTML with the schema, runnable examples, and only local assets', async () => {
      const res = await t.http.get(PATH).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text).toMatch(/^<!doctype html>/i);
      const refs = references(res.text);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) expect(ref).toMatch(/^\/(?!\/)/);
      const assets = [...res.text.matchAll(/<(?:script|link|img)\b[^>]*\b(?:src|href)="([^"]*)"/gi)].map((m) => m[1]);
      expect(assets).toEqual(expect.arrayContaining(['/docs/assets/docs.css', '/docs/assets/graphql-explorer.js', '/favicon.ico']));
      for (const asset of assets) {
        expect(asset).toMatch(/^\/docs\/assets\/|^\/favicon\.ico$/);
        const served = await t.http.get(asset).then(expectContract);
        expect(served.status).toBe(200);
      }
      expect(res.text).not.toMatch(/https?:\/\/(?!leads\.test)[a-z0-9.-]+\/[^"'\s]*\.(?:js|css)/i);
      expect(res.text).toContain('href="/docs/schema.graphql"');
      const schemaBlock = res.text.match(/<pre><code>([\s\S]*?)<\/code><\/pre>/);
      expect(unescapeHtml(schemaBlock![1])).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
      // Each example with its own variables (none: an empty box, and none sent).
      const examples = [...res.text.matchAll(/<option value="([^"]*)" data-variables="([^"]*)">([^<]*)<\/option>/g)].map((m) => ({
        query: unescapeHtml(m[1]),
        variables: m[2] ? JSON.parse(unescapeHtml(m[2])) : undefined,
      }));
      expect(examples.length).toBeGreaterThanOrEqual(4);
      for (const example of examples) {
        const ran = await query(example.query, example.variables);
        expect(ran.status).toBe(200);
        expect(ran.body.errors).toBeUndefined();
        expect(Object.keys(ran.body.data).length).toBeGreaterThan(0);
      }
    });

    it('serves the explorer script from /docs/assets as JavaScript that posts JSON to the same URL', async () => {
      const res = await t.http.get('/docs/assets/graphql-explorer.js').then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.text).toContain("'Content-Type': 'application/json'");
      expect(res.text).not.toMatch(/https?:\/\//);
    });

    it('returns the page, not data, for GET with a query string, whatever Accept says', async () => {
      for (const accept of ['application/json', GRAPHQL_RESPONSE, '*/*']) {
        const res = await t.http.get(PATH).query({ query: '{health{status}}' }).set('Accept', accept).then(expectContract);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe(HTML);
        expect(res.text).not.toContain('"data"');
        expect(res.headers).not.toHaveProperty('ratelimit');
      }
      const mutation = await t.http.get(`${PATH}?query=${encodeURIComponent('mutation { health { status } }')}`).then(expectContract);
      expect(mutation.headers['content-type']).toBe(HTML);
    });

    it('answers HEAD with the headers of the page and no body', async () => {
      const res = await t.http.head(PATH).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(HTML);
      expect(res.text ?? '').toBe('');
    });

    it.each(['put', 'delete', 'patch'] as const)('answers %s with 405 method_not_allowed and Allow: GET, HEAD, POST', async (method) => {
      const res = await t.http[method](PATH).send({ query: '{ health { status } }' }).then(expectContract);
      expect(res.status).toBe(405);
      expect(res.headers['content-type']).toBe(PROBLEM);
      expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });
  });

  describe('GET /docs/schema.graphql', () => {
    it('is src/graphql/schema.graphql, byte for byte, as text/plain', async () => {
      const res = await t.http.get('/docs/schema.graphql').buffer(true).then(expectContract);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(Buffer.from(res.text, 'utf8').equals(readFileSync(SCHEMA_FILE))).toBe(true);
      expect(() => buildSchema(res.text)).not.toThrow();
    });

    it('answers HEAD without a body, and 405 for other methods', async () => {
      const head = await t.http.head('/docs/schema.graphql').then(expectContract);
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(head.text ?? '').toBe('');
      const posted = await t.http.post('/docs/schema.graphql').send({ query: '{ health { status } }' }).then(expectContract);
      expect(posted.status).toBe(405);
      expect(posted.headers.allow).toBe('GET, HEAD');
    });
  });
});

describe('GraphQL: no stack traces outside production and test', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Apollo decides at start from NODE_ENV; jest sets "test", where Apollo would hide them anyway.
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'development';
    try {
      t = await startTestApp();
    } finally {
      process.env.NODE_ENV = previous;
    }
  });
  afterAll(() => t.close());

  it.each([
    ['a syntax error', '{ health { '],
    ['an unknown field', '{ users }'],
    ['a mutation', 'mutation { health { status } }'],
    ['a deep query', `{ ${nestedInQuery(6, 'health { status }')} }`],
    ['too many tokens', `{ health { ${'status '.repeat(1000)}} }`],
    ['a missing variable', 'query One($slug: String!) { doc(slug: $slug) { slug } }'],
  ])('leaves the stack out of %s', async (_name, text) => {
    for (const accept of ['application/json', GRAPHQL_RESPONSE]) {
      const res = await t.http.post(PATH).set('Accept', accept).send({ query: text }).then(expectContract);
      expect(res.status).toBeLessThan(500);
      expect(res.body.errors.length).toBeGreaterThan(0);
      expectNoStacktrace(res.body);
    }
  });
});

describe('GraphQL: the same anonymous quota as REST', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '3/60s', TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  it('counts GraphQL and REST requests together and answers 429 rate_limited with Retry-After', async () => {
    const ip = '203.0.113.77';
    for (let i = 0; i < 2; i++) {
      const rest = await t.http.get('/api/v1/info').set('X-Forwarded-For', ip).then(expectContract);
      expect(rest.status).toBe(200);
    }
    const last = await t.http.post(PATH).set('X-Forwarded-For', ip).send({ query: '{ site { brand } }' }).then(expectContract);
    expect(last.status).toBe(200);
    expect(last.body.data.site.brand).toEqual(expect.any(String));
    expect(last.headers.ratelimit).toMatch(/^"anonymous";r=0;t=\d+$/);
    expect(last.headers['ratelimit-policy']).toBe('"anonymous";q=3;w=60');

    for (const accept of ['application/json', GRAPHQL_RESPONSE]) {
      const refused = await t.http.post(PATH).set('X-Forwarded-For', ip).set('Accept', accept).send({ query: '{ site { brand } }' }).then(expectContract);
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toBe(PROBLEM);
      expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429, type: `${BASE}/docs/errors#rate_limited`, instance: PATH });
      const retryAfter = Number(refused.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(refused.headers.ratelimit).toMatch(/^"anonymous";r=0;t=\d+$/);
    }
    // And REST is refused too: one quota.
    const rest = await t.http.get('/api/v1/info').set('X-Forwarded-For', ip).then(expectContract);
    expect(rest.status).toBe(429);
    // Another client is unaffected.
    const other = await t.http.post(PATH).set('X-Forwarded-For', '203.0.113.78').send({ query: '{ health { status } }' }).then(expectContract);
    expect(other.status).toBe(200);
  });
});

describe('GraphQL answers are bounded by MAX_ANSWER_BYTES', () => {
  const CAP = 229_376;
  let t: TestApp;
  beforeAll(async () => {
    // Under ten copies of every page's Markdown (the docs total about 80 KB), over one copy of each: the estimate counts
    // every page at the size of the largest (times the pages: 200 KB in November 2026), so the docs no longer fit the
    // smallest cap allowed (65536), nor 196608. Ten copies of the introspection below (26 KB) stay over it.
    t = await startTestApp({ MAX_ANSWER_BYTES: String(CAP) });
  });
  afterAll(() => t.close());

  const post = (query: string, headers: Record<string, string> = {}) => t.http.post(PATH).set(headers).send({ query }).then(expectContract);
  const copies = (n: number, field: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

  function expectRefused(res: Response, message: RegExp, code: string, status = 200): void {
    expect(res.status).toBe(status);
    expect(res.body).not.toHaveProperty('data');
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ message: expect.stringMatching(message), extensions: { code } });
    expect(res.text.length).toBeLessThan(1000);
    expectNoStacktrace(res.body);
  }

  it('refuses before execution a query whose aliases multiply a large field past the cap', async () => {
    const docs = t.app.get(DocsService).search();
    const total = docs.reduce((sum, page) => sum + page.markdown.length, 0);
    expect(10 * total).toBeGreaterThan(CAP);
    const tooLarge = new RegExp(
      `^Answer size limit of ${CAP} bytes exceeded: this query could return about \\d+; ask for fewer copies of large fields \\(Doc\\.markdown\\)\\.$`,
    );
    for (const query of [
      copies(10, 'docs { markdown }'),
      // Fragments and nested aliases multiply as well.
      '{ a: docs { ...F } b: docs { ...F } } fragment F on Doc { m1: markdown m2: markdown m3: markdown }',
      `{ ${Array.from({ length: 3 }, (_, i) => `d${i}: docs { ... on Doc { x: markdown y: markdown } }`).join(' ')} }`,
    ]) {
      expectRefused(await post(query), tooLarge, 'GRAPHQL_VALIDATION_FAILED');
      expectRefused(await post(query, { Accept: GRAPHQL_RESPONSE }), tooLarge, 'GRAPHQL_VALIDATION_FAILED', 400);
    }
  });

  it('answers what fits: every page once, one page many times, a field repeated without aliases', async () => {
    const docs = t.app.get(DocsService);
    const all = await post('{ docs { slug markdown } }');
    expect(all.status).toBe(200);
    expect(all.body.data.docs.map((page: Json) => page.markdown)).toEqual(docs.search().map((page) => page.markdown));
    const one = await post(copies(5, 'doc(slug: "agents") { markdown }'));
    expect(one.body.data.a4.markdown).toBe(docs.find('agents')!.markdown);
    // Merged into one field by execution, so counted once.
    const merged = await post(`{ docs { ${'markdown '.repeat(50)}} }`);
    expect(merged.body.errors).toBeUndefined();
    expect(merged.body.data.docs).toHaveLength(docs.search().length);
  });

  it('checks the serialised answer too: introspection, left out of the estimate, is refused past the cap', async () => {
    // About 26 KB: one copy fits the cap, ten (the most aliases allowed) do not.
    const schema =
      '__schema { types { name kind description fields { name description type { name kind ofType { name kind ofType { name kind } } } args { name description type { name kind ofType { name kind } } } } enumValues { name description } inputFields { name description type { name kind ofType { name kind } } } } }';
    expect((await post(`{ ${schema} }`)).status).toBe(200);
    const tooLarge = new RegExp(`^The answer is \\d+ bytes, over the limit of ${CAP} \\(MAX_ANSWER_BYTES\\); ask for less\\.$`);
    expectRefused(await post(copies(10, schema)), tooLarge, 'ANSWER_TOO_LARGE');
    expectRefused(await post(copies(10, schema), { Accept: GRAPHQL_RESPONSE }), tooLarge, 'ANSWER_TOO_LARGE', 400);
  });
});
