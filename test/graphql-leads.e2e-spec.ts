/** @database reads through GraphQL: filters, ordering, ids */
import { Logger } from '@nestjs/common';
import type { Response } from 'supertest';
import { uuidv7 } from '../src/database/uuid-v7.js';
import { Lead } from '../src/leads/lead.entity.js';
import { storedLead } from './support/stored-leads.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Operators read leads over GraphQL (docs/decisions/0026-operator-reads-over-graphql-and-mcp.md): `leads` as a Relay
 * connection and `lead(id)`, the same pages, filters and leads as GET /api/v1/leads; FORBIDDEN without leads:read;
 * BAD_USER_INPUT naming the argument; the row limit counting `first` through variables, aliases and fragments; the
 * audit line. Every response is checked against the contract.
 */

const PATH = '/api/v1/graphql';
const JSON_UTF8 = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const LEAD_FIELDS =
  'id received_at nome email telefone telefone_e164 empresa mensagem origem channel registration_id client_id ' +
  'legal_bases { category type status recorded_at channel consent_text_sha256 revoked_at } ' +
  'context { page_url page_title referrer utm_source utm_medium utm_campaign utm_term utm_content gclid fbclid } ' +
  'screening { verdict reasons decided_by decided_at }';
/** A GraphQL lead as REST shows it: REST leaves out the context members not sent, where GraphQL answers null. */
const asRest = (lead: unknown) => {
  const { context, ...rest } = lead as { context: Record<string, unknown> };
  return { ...rest, context: Object.fromEntries(Object.entries(context).filter(([, value]) => value !== null)) };
};
const PAGE_QUERY = `query Page($first: Int, $after: String, $filter: LeadFilter) {
  leads(first: $first, after: $after, filter: $filter) {
    edges { cursor node { ${LEAD_FIELDS} } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
/** The window of the rows stored directly, apart from those sent through the API (which are stored now). */
const WINDOW = { since: '2020-01-01T00:00:00Z', until: '2020-01-02T00:00:00Z' };

type Json = Record<string, any>;

describe('GraphQL for operators: leads and lead', () => {
  let t: TestApp;
  let reader: string;
  let agent: string;

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read', 'crm-reader');
    const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
    agent = (await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: registration.body.identity_assertion })).body
      .access_token;

    // One at a time, so that received_at orders them as sent.
    for (const body of [
      { nome: 'Maria Souza', email: 'Maria@Empresa.COM', telefone: '(11) 98765-4321', empresa: 'Empresa', mensagem: 'Olá', origem: 'site' },
      { nome: 'Ana', email: 'ana@example.com', origem: 'site' },
      { nome: 'Élodie', email: 'ÉLODIE@Example.com', origem: 'evento' },
      { nome: 'Bruno', email: 'bruno@example.com' },
    ]) {
      expect((await t.http.post('/api/v1/lead').send(body).then(expectContract)).status).toBe(201);
    }
    // Rows stored directly: runs with equal received_at (only the id orders them), a millisecond apart, and one on each
    // side of the window.
    const instants = ['2020-01-01T10:00:00.000Z', '2020-01-01T10:00:00.001Z', '2020-01-01T12:00:00.000Z'];
    const rows: Lead[] = Array.from({ length: 12 }, (_, i) => storedLead(i, { origem: i % 3 === 0 ? 'feira' : null, receivedAt: new Date(instants[i % 3]) }));
    rows.push({ ...rows[1], id: uuidv7(), receivedAt: new Date('2019-12-31T23:59:59.999Z') }, { ...rows[1], id: uuidv7(), receivedAt: new Date(WINDOW.until) });
    await t.dataSource.getRepository(Lead).insert(rows);
  });
  afterAll(() => t.close());

  const post = (body: Json, token: string | null = reader, headers: Record<string, string> = {}) => {
    const req = t.http.post(PATH).set(headers);
    return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).send(body).then(expectContract);
  };
  const gql = (query: string, variables?: Json, token: string | null = reader) => post({ query, ...(variables ? { variables } : {}) }, token);

  /** A successful execution: 200 application/json with `data` and no `errors`. */
  async function data(query: string, variables?: Json, token: string | null = reader): Promise<Json> {
    const res = await gql(query, variables, token);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  }

  /** Every lead GET /api/v1/leads gives for a query string, following next_cursor. */
  async function restAll(query: Record<string, string> = {}): Promise<Json[]> {
    const all: Json[] = [];
    let cursor: string | null = null;
    do {
      const res: Response = await t.http
        .get('/api/v1/leads')
        .query({ ...query, limit: '200', ...(cursor ? { cursor } : {}) })
        .set('Authorization', `Bearer ${reader}`)
        .then(expectContract);
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      cursor = res.body.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every lead of `leads`, page by page with `first`, checking each page's edges and pageInfo. */
  async function graphqlAll(first: number, filter?: Json): Promise<{ leads: Json[]; pages: number }> {
    const leads: Json[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const { leads: page } = await data(PAGE_QUERY, { first, after, filter });
      pages++;
      const { edges, pageInfo } = page;
      expect(edges.length).toBeLessThanOrEqual(first);
      expect(pageInfo.hasPreviousPage).toBe(false);
      expect(pageInfo.startCursor).toBe(edges[0]?.cursor ?? null);
      expect(pageInfo.endCursor).toBe(edges.at(-1)?.cursor ?? null);
      for (const edge of edges) expect(edge.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      leads.push(...edges.map((edge: Json) => edge.node));
      if (!pageInfo.hasNextPage) return { leads, pages };
      expect(edges).toHaveLength(first);
      after = pageInfo.endCursor;
    }
  }

  function expectGraphqlError(res: Response, path: string, code: string): Json {
    expect(res.status).toBe(200);
    expect(res.body.errors).toHaveLength(1);
    const [error] = res.body.errors;
    expect(error.path).toEqual([path]);
    expect(error.extensions.code).toBe(code);
    expect(error.extensions).not.toHaveProperty('stacktrace');
    return error;
  }

  describe('leads: the pages of GET /api/v1/leads as a Relay connection', () => {
    it('pages through every lead with edges and pageInfo, newest first, exactly as REST lists them', async () => {
      const rest = await restAll();
      expect(rest).toHaveLength(4 + 14);
      for (const first of [1, 5, 200]) {
        const { leads, pages } = await graphqlAll(first);
        expect(leads.map(asRest)).toStrictEqual(rest);
        // The last page says so itself (the reader looks one lead ahead): no empty page after it.
        expect(pages).toBe(Math.ceil(rest.length / first));
      }
      expect(rest.slice(0, 4).map((lead) => lead.nome)).toEqual(['Bruno', 'Élodie', 'Ana', 'Maria Souza']);
      expect(rest[3]).toMatchObject({ email: 'Maria@empresa.com', telefone_e164: '+5511987654321', channel: 'api', registration_id: null, client_id: null });
    });

    it('gives 50 by default (the schema states it), and a cursor of any edge continues after that edge', async () => {
      const { leads } = await data(`{ leads { edges { cursor node { id } } pageInfo { hasNextPage } } }`);
      const rest = await restAll();
      expect(leads.edges.map((edge: Json) => edge.node.id)).toEqual(rest.map((lead) => lead.id));
      expect(leads.pageInfo.hasNextPage).toBe(false);
      const third = leads.edges[2].cursor;
      const after = await data(`query After($after: String) { leads(first: 3, after: $after) { edges { node { id } } } }`, { after: third });
      expect(after.leads.edges.map((edge: Json) => edge.node.id)).toEqual(rest.slice(3, 6).map((lead) => lead.id));
      const { __type } = await data('{ __type(name: "Query") { fields { name args { name defaultValue } } } }');
      const leadsField = __type.fields.find((field: Json) => field.name === 'leads');
      expect(leadsField.args).toEqual([
        { name: 'first', defaultValue: '50' },
        { name: 'after', defaultValue: null },
        { name: 'filter', defaultValue: null },
      ]);
    });

    it.each<[string, Json, Record<string, string>]>([
      ['origem, exactly', { origem: 'site' }, { origem: 'site' }],
      ['e-mail, in any letter case (Unicode too)', { email: 'élodie@EXAMPLE.com' }, { email: 'élodie@EXAMPLE.com' }],
      ['since (inclusive) and until (exclusive)', { since: WINDOW.since, until: WINDOW.until }, { since: WINDOW.since, until: WINDOW.until }],
      ['since with an offset, and origem', { since: '2019-12-31T21:00:00-03:00', origem: 'feira' }, { since: '2019-12-31T21:00:00-03:00', origem: 'feira' }],
      ['until alone', { until: '2020-01-01T10:00:00.001Z' }, { until: '2020-01-01T10:00:00.001Z' }],
      ['plain dates, days in TIME_ZONE', { since: '2020-01-01', until: '2020-01-01' }, { since: '2020-01-01', until: '2020-01-01' }],
    ])('filters by %s as REST does, page by page', async (_name, filter, query) => {
      const rest = await restAll(query);
      expect(rest.length).toBeGreaterThan(0);
      const { leads } = await graphqlAll(2, filter);
      expect(leads.map(asRest)).toStrictEqual(rest);
    });

    it('filters by the window exactly: equal timestamps ordered by id, both edges of the window honoured', async () => {
      const { leads } = await graphqlAll(4, { since: WINDOW.since, until: WINDOW.until });
      expect(leads).toHaveLength(12);
      for (const lead of leads) expect(lead.received_at >= '2020-01-01T00:00:00.000Z' && lead.received_at < '2020-01-02T00:00:00.000Z').toBe(true);
      const keys = leads.map((lead) => `${lead.received_at} ${lead.id}`);
      expect(keys).toEqual([...keys].sort().reverse());
      expect((await graphqlAll(50, { email: 'MARIA@EMPRESA.COM' })).leads.map((lead) => lead.nome)).toEqual(['Maria Souza']);
      expect((await graphqlAll(50, { origem: 'Site' })).leads).toEqual([]);
    });

    it('takes a plain date as a day in TIME_ZONE (Brasília): 2020-01-01 runs from 03:00 UTC to 03:00 UTC the next day', async () => {
      const { leads } = await graphqlAll(50, { since: '2020-01-01', until: '2020-01-01' });
      const instants = leads.map((lead) => lead.received_at);
      // The window's 12, and the one at 00:00 UTC of the 2nd (21:00 in Brasília); not the one at 23:59:59.999 UTC of the 31st.
      expect(instants).toHaveLength(13);
      expect(instants[0]).toBe('2020-01-02T00:00:00.000Z');
      expect(instants).not.toContain('2019-12-31T23:59:59.999Z');
    });

    it('takes filters as literals too, and the same filter given another way keeps its cursors', async () => {
      const literal = await data(`{ leads(first: 2, filter: { origem: "feira", since: "${WINDOW.since}" }) { edges { node { id } } pageInfo { endCursor } } }`);
      const next = await data(PAGE_QUERY, {
        first: 2,
        after: literal.leads.pageInfo.endCursor,
        filter: { origem: 'feira', since: '2019-12-31T21:00:00-03:00' },
      });
      const all = await restAll({ origem: 'feira', since: WINDOW.since });
      expect([...literal.leads.edges, ...next.leads.edges].map((edge: Json) => edge.node.id)).toEqual(all.slice(0, 4).map((lead) => lead.id));
    });
  });

  describe('lead(id)', () => {
    it('is the lead of GET /api/v1/leads/{id}; an unknown or malformed id is null, not an error', async () => {
      for (const lead of (await restAll()).slice(0, 5)) {
        const rest = await t.http.get(`/api/v1/leads/${lead.id}`).set('Authorization', `Bearer ${reader}`).then(expectContract);
        expect(rest.status).toBe(200);
        const { lead: found } = await data(`query One($id: ID!) { lead(id: $id) { ${LEAD_FIELDS} } }`, { id: lead.id });
        expect(asRest(found)).toStrictEqual(rest.body);
        expect((await data(`query One($id: ID!) { lead(id: $id) { id } }`, { id: lead.id.toUpperCase() })).lead).toEqual({ id: lead.id });
      }
      for (const id of [uuidv7(), 'not-an-id', '', "1' OR '1'='1"]) {
        expect(await data('query One($id: ID!) { lead(id: $id) { id } }', { id })).toEqual({ lead: null });
      }
    });
  });

  describe('who may read: FORBIDDEN without leads:read, and nothing leaked', () => {
    const callers = async (): Promise<[string, string | null][]> => [
      ['no token', null],
      ['an agent token', agent],
      ['an operator token without leads:read', await operatorToken(t, 'leads:write leads:export', 'crm-writer')],
    ];

    it('answers leads with a FORBIDDEN error and no data (leads is non-null, so data is null)', async () => {
      for (const [name, token] of await callers()) {
        const res = await gql(PAGE_QUERY, { first: 5 }, token);
        const error = expectGraphqlError(res, 'leads', 'FORBIDDEN');
        expect([name, error.message]).toEqual([name, 'leads needs an access token with the scope leads:read (an operator client’s).']);
        expect(res.body.data).toBeNull();
        expect(res.text).not.toMatch(/Maria|example\.com|cursor"\s*:/);
      }
    });

    it('answers lead with a FORBIDDEN error and null, while the other fields of the query still answer', async () => {
      const [lead] = await restAll();
      for (const [name, token] of await callers()) {
        const res = await gql(`query Q($id: ID!) { health { status } lead(id: $id) { id nome email } }`, { id: lead.id }, token);
        expectGraphqlError(res, 'lead', 'FORBIDDEN');
        expect([name, res.body.data]).toEqual([name, { health: { status: 'ok' }, lead: null }]);
        expect(res.text).not.toContain(lead.email);
      }
    });

    it('asks for the scope even for an unknown id and for a query that would refuse its arguments', async () => {
      expectGraphqlError(await gql(`{ lead(id: "${uuidv7()}") { id } }`, undefined, agent), 'lead', 'FORBIDDEN');
      expectGraphqlError(await gql('{ leads(first: 0) { edges { cursor } } }', undefined, null), 'leads', 'FORBIDDEN');
    });

    it('runs an operator request under its own token and the same door: a bad token is 401', async () => {
      const res = await t.http.post(PATH).set('Authorization', 'Bearer not-a-token').send({ query: '{ lead(id: "x") { id } }' }).then(expectContract);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    });
  });

  describe('bad arguments: BAD_USER_INPUT naming the argument', () => {
    const cases: [string, Json, string, RegExp][] = [
      ['first 0', { first: 0 }, 'first', /^first must be an integer from 1 to 200\.$/],
      ['first 201', { first: 201 }, 'first', /^first must be an integer from 1 to 200\.$/],
      ['first negative', { first: -1 }, 'first', /^first must be/],
      [
        'a date-time without a time zone',
        { filter: { since: '2026-01-01T00:00:00' } },
        'filter.since',
        /^filter\.since must be a date such as 2026-11-27 \(from 00:00 of that day in the service's time zone\) or an RFC 3339 date-time/,
      ],
      [
        'a day that does not exist',
        { filter: { until: '2026-02-30' } },
        'filter.until',
        /^filter\.until must be a date such as 2026-11-27 \(through the end of that day in the service's time zone\) or an RFC 3339 date-time/,
      ],
      [
        'a date that is not text',
        { filter: { since: 20260101 } },
        'filter.since',
        /^filter\.since must be a date such as 2026-11-27 \(from 00:00 of that day in the service's time zone\) or an RFC 3339 date-time/,
      ],
      [
        'until before since',
        { filter: { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' } },
        'filter.until',
        /^filter\.until must not be before since/,
      ],
      ['an empty origem', { filter: { origem: '' } }, 'filter.origem', /^filter\.origem/],
      ['an e-mail longer than any stored', { filter: { email: `${'a'.repeat(250)}@example.com` } }, 'filter.email', /^filter\.email/],
      ['a cursor that is not one', { after: 'garbage!' }, 'after', /cursor/],
      ['a tampered cursor', { after: 'AQ' + 'A'.repeat(40) }, 'after', /cursor/],
    ];

    it.each(cases)('%s', async (_name, variables, argument, message) => {
      const res = await gql(PAGE_QUERY, variables);
      const error = expectGraphqlError(res, 'leads', 'BAD_USER_INPUT');
      expect(error.extensions.argument).toBe(argument);
      expect(error.message).toMatch(message);
      expect(error.extensions.errors[0]).toMatchObject({ argument, code: expect.any(String), detail: error.message });
      expect(res.body.data).toBeNull();
    });

    it('refuses a cursor given with another filter (foreign) as BAD_USER_INPUT on after', async () => {
      const { leads } = await data(PAGE_QUERY, { first: 1, filter: { origem: 'site' } });
      const cursor = leads.pageInfo.endCursor;
      for (const filter of [undefined, { origem: 'feira' }, { origem: 'site', email: 'ana@example.com' }]) {
        const res = await gql(PAGE_QUERY, { first: 1, after: cursor, filter });
        const error = expectGraphqlError(res, 'leads', 'BAD_USER_INPUT');
        expect(error.extensions).toMatchObject({ argument: 'after', errors: [{ argument: 'after', code: 'invalid_cursor' }] });
      }
      // And a REST cursor works here when the filters are the same: one reader, one cursor format.
      const rest = await t.http.get('/api/v1/leads?origem=site&limit=1').set('Authorization', `Bearer ${reader}`).then(expectContract);
      const next = await data(PAGE_QUERY, { first: 1, after: rest.body.next_cursor, filter: { origem: 'site' } });
      expect([rest.body.data[0].nome, next.leads.edges[0].node.nome]).toEqual(['Ana', 'Maria Souza']);
    });

    it('names several wrong arguments at once', async () => {
      const res = await gql(PAGE_QUERY, { first: 500, filter: { since: 'yesterday' } });
      const error = expectGraphqlError(res, 'leads', 'BAD_USER_INPUT');
      expect(error.extensions.errors.map((e: Json) => e.argument).sort()).toEqual(['filter.since', 'first']);
    });

    it('leaves type errors of variables to GraphQL itself (BAD_USER_INPUT before execution)', async () => {
      const res = await gql(PAGE_QUERY, { first: 'ten' });
      expect(res.status).toBe(200);
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(res.body).not.toHaveProperty('data');
    });
  });

  describe('the row limit: at most 200 leads per query, first counted through variables, aliases and fragments', () => {
    const aliases = (n: number, first: string) => Array.from({ length: n }, (_, i) => `a${i}: leads(first: ${first}) { edges { cursor } }`).join(' ');
    const ROWS_REFUSED = /^Row limit of 200 exceeded: this query could read (\d+) leads/;

    function expectRefused(res: Response, rows: number, status = 200): void {
      expect(res.status).toBe(status);
      expect(res.body).not.toHaveProperty('data');
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(res.body.errors[0].message).toMatch(ROWS_REFUSED);
      expect(Number(ROWS_REFUSED.exec(res.body.errors[0].message)![1])).toBe(rows);
    }

    it('refuses ten aliased leads(first: 200) as 2000 rows, before reading any (no audit line)', async () => {
      const log = jest.spyOn(Logger.prototype, 'log');
      try {
        expectRefused(await gql(`{ ${aliases(10, '200')} }`), 2000);
        expectRefused(await post({ query: `{ ${aliases(10, '200')} }` }, reader, { Accept: GRAPHQL_RESPONSE }), 2000, 400);
        expect(log.mock.calls.filter(([line]) => (line as Json)?.audit === 'lead_read')).toEqual([]);
      } finally {
        log.mockRestore();
      }
    });

    it('reads first from the variables: the same document is refused or answered by their values', async () => {
      const query = `query Many($n: Int) { ${aliases(10, '$n')} }`;
      expectRefused(await gql(query, { n: 200 }), 2000);
      expectRefused(await gql(query, { n: 21 }), 210);
      const fits = await data(query, { n: 20 });
      expect(Object.keys(fits)).toHaveLength(10);
      // No value: the default of 50 for each.
      expectRefused(await gql(query, {}), 500);
      expectRefused(await gql(`query Many($n: Int = 30) { ${aliases(7, '$n')} }`, {}), 210);
    });

    it('counts aliases hidden in fragments, and the default first of a bare leads', async () => {
      expectRefused(
        await gql(
          `{ a: leads { edges { cursor } } ...F ... on Query { c: leads(first: 100) { edges { cursor } } } } fragment F on Query { b: leads(first: 60) { edges { cursor } } }`,
        ),
        210,
      );
      expectRefused(await gql(`{ ${aliases(5, '50')} }`), 250);
      // One page of 200, or 200 spread over aliases, is allowed.
      expect((await data(`{ leads(first: 200) { edges { node { ${LEAD_FIELDS} } } } }`)).leads.edges).toHaveLength(18);
      expect(Object.keys(await data(`{ ${aliases(4, '50')} }`))).toHaveLength(4);
    });

    it('refuses before the scope check: the cost of a query does not depend on who asks', async () => {
      expectRefused(await gql(`{ ${aliases(10, '200')} }`, undefined, null), 2000);
    });
  });

  describe('the audit line', () => {
    let log: jest.SpyInstance;
    beforeEach(() => {
      log = jest.spyOn(Logger.prototype, 'log');
    });
    afterEach(() => log.mockRestore());
    const auditLines = () => log.mock.calls.filter(([line]) => (line as Json)?.audit === 'lead_read').map(([line]) => line);

    it('records each read like REST: client, route, filters without the e-mail, rows, request id', async () => {
      const res = await gql(PAGE_QUERY, { first: 3, filter: { ...WINDOW, email: 'lead1@example.com' } });
      expect(res.body.data.leads.edges).toHaveLength(1);
      const [lead] = await restAll({ origem: 'site' });
      const one = await gql('query One($id: ID!) { lead(id: $id) { id } }', { id: lead.id });
      const none = await gql('query One($id: ID!) { lead(id: $id) { id } }', { id: uuidv7() });
      const lines = auditLines();
      expect(lines.filter((line) => line.route !== 'GET /api/v1/leads')).toEqual([
        {
          audit: 'lead_read',
          route: 'POST /api/v1/graphql leads',
          client_id: 'crm-reader',
          request_id: res.headers['x-request-id'],
          filters: {
            since: '2020-01-01T00:00:00.000Z',
            until: '2020-01-02T00:00:00.000Z',
            origem: null,
            email_filter: true,
            screening: 'accepted',
            channel: null,
            search: false,
          },
          rows: 1,
        },
        {
          audit: 'lead_read',
          route: 'POST /api/v1/graphql lead',
          client_id: 'crm-reader',
          request_id: one.headers['x-request-id'],
          filters: { since: null, until: null, origem: null, email_filter: false },
          rows: 1,
          lead_id: lead.id,
        },
        {
          audit: 'lead_read',
          route: 'POST /api/v1/graphql lead',
          client_id: 'crm-reader',
          request_id: none.headers['x-request-id'],
          filters: { since: null, until: null, origem: null, email_filter: false },
          rows: 0,
        },
      ]);
      expect(JSON.stringify(lines).toLowerCase()).not.toMatch(/example\.com|maria|empresa/);
    });

    it('records nothing for a refused read', async () => {
      await gql(PAGE_QUERY, { first: 0 });
      await gql(PAGE_QUERY, { first: 5 }, agent);
      expect(auditLines()).toEqual([]);
    });
  });
});
