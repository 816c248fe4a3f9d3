/** @database reads through MCP: filters, ordering, ids */
import { Logger } from '@nestjs/common';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import type { Response } from 'supertest';
import { uuidv7 } from '../src/database/uuid-v7.js';
import { Lead } from '../src/leads/lead.entity.js';
import { storedLead } from './support/stored-leads.js';
import { storeScreenedLead } from './support/screened-leads.js';
import { LeadReader } from '../src/leads/lead-reader.service.js';
import { CONTRACT, contractSchema, expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { freePort } from './support/server-process.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Operators read leads over MCP (docs/decisions/0026-operator-reads-over-graphql-and-mcp.md): list_leads and get_lead
 * exist only for a token with leads:read (not listed, and called by name answered as an unknown tool), give what
 * GET /api/v1/leads gives, refuse bad arguments with pointers, stay under MAX_ANSWER_BYTES and leave the audit line.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ACCEPT_BOTH = 'application/json, text/event-stream';
const OPEN_TOOLS = ['get_doc', 'get_service_health', 'get_service_info', 'search_docs', 'submit_lead', 'validate_lead'];
const OPERATOR_TOOLS = ['get_lead', 'list_leads'];
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

type Json = Record<string, any>;

/** The JSON-RPC message of a /mcp response, whether it came as application/json or as an SSE stream. */
function message(res: Response): Json {
  if (String(res.headers['content-type']).startsWith('text/event-stream')) {
    const data = res.text.split('\n').filter((line) => line.startsWith('data:'));
    expect(data).toHaveLength(1);
    return JSON.parse(data[0].slice(5));
  }
  return res.body;
}

function expectMcpContract(res: Response): Response {
  expectContract(res);
  const validate = contractSchema('/components/schemas/JsonRpcResponse');
  if (res.status === 200 && !validate(message(res))) throw new Error(`not a JsonRpcResponse: ${JSON.stringify(validate.errors)}`);
  return res;
}

describe('MCP for operators: list_leads and get_lead', () => {
  let t: TestApp;
  let BASE: string;
  let reader: string;
  let agent: string;
  let writer: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const port = await freePort();
    BASE = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: BASE });
    await t.app.listen(port, '127.0.0.1');
    reader = await operatorToken(t, 'leads:read', 'crm-reader');
    writer = await operatorToken(t, 'leads:write leads:export', 'crm-writer');
    const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
    agent = (await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: registration.body.identity_assertion })).body
      .access_token;

    for (const body of [
      { nome: 'Maria Souza', email: 'Maria@Empresa.COM', telefone: '(11) 98765-4321', empresa: 'Empresa', mensagem: 'Olá\nPodem ligar?', origem: 'site' },
      { nome: 'Ana', email: 'ana@example.com', origem: 'site' },
      { nome: 'Élodie', email: 'ÉLODIE@Example.com', origem: 'evento' },
    ]) {
      expect((await t.http.post('/api/v1/lead').send(body).then(expectContract)).status).toBe(201);
    }
    const rows: Lead[] = Array.from({ length: 9 }, (_, i) =>
      storedLead(i, { origem: i % 2 === 0 ? 'feira' : null, receivedAt: new Date(i < 5 ? '2020-01-01T10:00:00.000Z' : '2020-01-01T12:00:00.000Z') }),
    );
    await t.dataSource.getRepository(Lead).insert(rows);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await t.close();
  });

  /** A raw JSON-RPC POST; `modern` sends it as a 2026-07-28 request (JSON answer), else as a 2025 one (SSE). */
  const rpc = (body: Json, token: string | null, modern = false) => {
    const headers: Record<string, string> = { Accept: ACCEPT_BOTH, 'Content-Type': 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (modern)
      Object.assign(headers, { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': body.method }, body.params?.name ? { 'Mcp-Name': body.params.name } : {});
    const sent = modern ? { ...body, params: { ...body.params, _meta: MODERN_META } } : body;
    return t.http.post('/mcp').set(headers).send(JSON.stringify(sent)).then(expectMcpContract);
  };
  const call = (name: string, args: Json, token: string | null, modern = false) =>
    rpc({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }, token, modern);
  const listTools = async (token: string | null, modern = false) =>
    message(await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, token, modern)).result.tools as Json[];

  /** A tool's result, which must be a result (not a JSON-RPC error). */
  async function result(name: string, args: Json, token: string | null = reader): Promise<CallToolResult> {
    const res = await call(name, args, token);
    expect(res.status).toBe(200);
    const answer = message(res);
    expect(answer.error).toBeUndefined();
    const tool = answer.result as CallToolResult;
    expect(JSON.parse(String((tool.content[0] as { text: string }).text))).toEqual(tool.structuredContent);
    return tool;
  }

  async function rest(path: string, query: Record<string, string> = {}): Promise<Response> {
    return t.http.get(path).query(query).set('Authorization', `Bearer ${reader}`).then(expectContract);
  }

  async function connect(token: string, era: 'legacy' | 'modern'): Promise<Client> {
    const client = new Client({ name: 'leads-e2e', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  describe('who has the tools', () => {
    it.each([false, true])('lists them only for a token with leads:read (2026-07-28: %s)', async (modern) => {
      const names = async (token: string | null) => (await listTools(token, modern)).map((tool) => tool.name).sort();
      expect(await names(reader)).toEqual([...OPERATOR_TOOLS, ...OPEN_TOOLS].sort());
      expect(await names(await operatorToken(t, 'leads:read leads:write'))).toEqual([...OPERATOR_TOOLS, ...OPEN_TOOLS].sort());
      for (const token of [null, agent, writer]) expect(await names(token)).toEqual(OPEN_TOOLS);
    });

    it('describes them with the contract’s own parameters, as read-only tools', async () => {
      const tools = Object.fromEntries((await listTools(reader)).map((tool) => [tool.name, tool]));
      const parameters = CONTRACT.components.parameters;
      expect(tools.list_leads.inputSchema).toEqual({
        type: 'object',
        properties: Object.fromEntries(
          ['Limit', 'Cursor', 'Since', 'Until', 'Origem', 'Email', 'ScreeningFilter', 'Channel', 'Q'].map((name) => [
            parameters[name].name,
            { ...parameters[name].schema, description: parameters[name].description },
          ]),
        ),
        additionalProperties: false,
      });
      expect(tools.get_lead.inputSchema).toMatchObject({
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      });
      for (const name of OPERATOR_TOOLS) {
        expect(tools[name].annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
        expect(tools[name].description).toMatch(/GET \/api\/v1\/leads/);
      }
    });

    it.each([false, true])('answers a call by name without the scope exactly as a call of a tool that does not exist (2026-07-28: %s)', async (modern) => {
      for (const token of [null, agent, writer]) {
        const unknownRes = await call('no_such_tool', {}, token, modern);
        const unknown = message(unknownRes);
        expect(unknown).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Tool no_such_tool not found' } });
        for (const [name, args] of [
          ['list_leads', {}],
          ['get_lead', { id: uuidv7() }],
        ] as const) {
          const res = await call(name, args, token, modern);
          expect(res.status).toBe(unknownRes.status);
          expect(res.headers['content-type']).toBe(unknownRes.headers['content-type']);
          expect(message(res)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: `Tool ${name} not found` } });
          expect(res.text).not.toMatch(/Maria|example\.com|next_cursor/);
        }
      }
    });

    it('offers them to the SDK client of an operator in both eras, and hides them from an agent’s', async () => {
      for (const era of ['legacy', 'modern'] as const) {
        const operator = await connect(reader, era);
        expect((await operator.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(OPERATOR_TOOLS));
        const page = (await operator.callTool({ name: 'list_leads', arguments: { limit: 2 } })) as CallToolResult;
        expect(page.isError).toBe(false);
        expect((page.structuredContent as Json).data).toHaveLength(2);
        const other = await connect(agent, era);
        expect((await other.listTools()).tools.map((tool) => tool.name).sort()).toEqual(OPEN_TOOLS);
        await expect(other.callTool({ name: 'list_leads', arguments: {} })).rejects.toThrow(/Tool list_leads not found/);
      }
    });
  });

  describe('list_leads gives what GET /api/v1/leads gives', () => {
    it.each<[string, Json, Record<string, string>]>([
      ['no filter', {}, {}],
      ['origem', { origem: 'feira' }, { origem: 'feira' }],
      ['e-mail in another letter case', { email: 'élodie@EXAMPLE.COM' }, { email: 'élodie@EXAMPLE.COM' }],
      ['since and until', { since: '2020-01-01T10:00:00Z', until: '2020-01-01T12:00:00Z' }, { since: '2020-01-01T10:00:00Z', until: '2020-01-01T12:00:00Z' }],
      ['plain dates (days in TIME_ZONE)', { since: '2020-01-01', until: '2020-01-01' }, { since: '2020-01-01', until: '2020-01-01' }],
    ])('page by page, with %s', async (_name, filter, query) => {
      const expected = await rest('/api/v1/leads', { ...query, limit: '200' });
      expect(expected.body.data.length).toBeGreaterThan(0);
      const seen: Json[] = [];
      let cursor: string | null = null;
      do {
        const page = await result('list_leads', { ...filter, limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.isError).toBe(false);
        const body = page.structuredContent as Json;
        // The page of REST with the same limit and cursor, byte for byte.
        const same = await rest('/api/v1/leads', { ...query, limit: '2', ...(cursor ? { cursor } : {}) });
        expect(body).toStrictEqual(same.body);
        seen.push(...body.data);
        cursor = body.next_cursor;
      } while (cursor);
      expect(seen).toStrictEqual(expected.body.data);
    });

    it('gives 50 by default, and null arguments count as not given', async () => {
      const all = await rest('/api/v1/leads', { limit: '200' });
      const page = await result('list_leads', { cursor: null, origem: null });
      expect(page.structuredContent).toStrictEqual({ data: all.body.data, next_cursor: null, held_count: 0 });
    });

    it('lists held leads with screening held, as REST does, and counts them in held_count', async () => {
      const held = await storeScreenedLead(t, 0, 'held', { origem: 'mcp-review' });
      const page = await result('list_leads', { origem: 'mcp-review', screening: 'held' });
      const same = await rest('/api/v1/leads', { origem: 'mcp-review', screening: 'held' });
      expect(page.structuredContent).toStrictEqual(same.body);
      expect(same.body).toMatchObject({ data: [{ id: held.id, screening: { verdict: 'held' } }], held_count: 1 });
      expect(await result('list_leads', { origem: 'mcp-review' })).toMatchObject({ structuredContent: { data: [], held_count: 1 } });
    });

    it.each<[string, Json, string[]]>([
      ['limit 0', { limit: 0 }, ['/limit:out_of_range']],
      ['limit 201', { limit: 201 }, ['/limit:out_of_range']],
      ['limit not an integer', { limit: 2.5 }, ['/limit:invalid_format']],
      ['a date-time without a time zone', { since: '2026-01-01T00:00:00' }, ['/since:invalid_format']],
      ['a date that does not exist', { until: '2026-02-29' }, ['/until:invalid_format']],
      ['until before since', { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, ['/until:out_of_range']],
      ['a tampered cursor', { cursor: 'AQ' + 'A'.repeat(40) }, ['/cursor:invalid_cursor']],
      ['an empty origem', { origem: '' }, ['/origem:too_short']],
      ['an unknown argument', { limit: 2, order: 'asc' }, ['/order:unknown_parameter']],
      ['an unknown verdict', { screening: 'pending' }, ['/screening:invalid_format']],
      ['an array', { origem: ['site', 'feira'] }, ['/origem:invalid_type']],
      ['an object', { limit: { n: 1 } }, ['/limit:invalid_type']],
    ])('refuses %s with an isError result naming the argument by pointer', async (_name, args, expected) => {
      const tool = await result('list_leads', args);
      expect(tool.isError).toBe(true);
      const body = tool.structuredContent as { code: string; errors: { pointer: string; code: string; detail: string }[] };
      expect(body.code).toBe('invalid_query');
      expect(body.errors.map((e) => `${e.pointer}:${e.code}`)).toEqual(expected);
      for (const error of body.errors) expect(error.detail).toEqual(expect.any(String));
    });

    it('refuses a cursor from another filter, and takes a REST cursor for the same one', async () => {
      const first = await rest('/api/v1/leads', { origem: 'feira', limit: '1' });
      const foreign = await result('list_leads', { origem: 'site', cursor: first.body.next_cursor });
      expect(foreign.isError).toBe(true);
      expect(foreign.structuredContent).toMatchObject({ errors: [{ pointer: '/cursor', code: 'invalid_cursor' }] });
      const next = await result('list_leads', { origem: 'feira', limit: 1, cursor: first.body.next_cursor });
      const restNext = await rest('/api/v1/leads', { origem: 'feira', limit: '1', cursor: first.body.next_cursor });
      expect(next.structuredContent).toStrictEqual(restNext.body);
    });
  });

  describe('a failure no tool answers itself', () => {
    it('is an isError result internal_error with the request id, never the error’s own text', async () => {
      const spy = jest.spyOn(t.app.get(LeadReader), 'list').mockRejectedValueOnce(new Error('invalid byte sequence for encoding "UTF8": 0x00'));
      try {
        const page = await result('list_leads', {});
        expect(page.isError).toBe(true);
        expect(page.structuredContent).toEqual({ code: 'internal_error', detail: 'An unexpected error occurred.', request_id: expect.any(String) });
        expect(JSON.stringify(page)).not.toContain('byte sequence');
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('get_lead', () => {
    it('is the lead of GET /api/v1/leads/{id}; an unknown or malformed id is an isError result lead_not_found', async () => {
      const all = await rest('/api/v1/leads', { limit: '200' });
      for (const lead of all.body.data.slice(0, 4)) {
        const one = await rest(`/api/v1/leads/${lead.id}`);
        const tool = await result('get_lead', { id: lead.id });
        expect(tool.isError).toBe(false);
        expect(tool.structuredContent).toStrictEqual(one.body);
      }
      for (const id of [uuidv7(), 'not-an-id', '']) {
        const tool = await result('get_lead', { id });
        expect(tool.isError).toBe(true);
        expect(tool.structuredContent).toEqual({ code: 'lead_not_found', detail: 'No stored lead has this id.' });
      }
    });

    it('refuses a missing or non-string id naming /id', async () => {
      for (const [args, code] of [
        [{}, 'required'],
        [{ id: 42 }, 'invalid_type'],
        [{ id: ['a'] }, 'invalid_type'],
      ] as const) {
        const tool = await result('get_lead', args);
        expect(tool.isError).toBe(true);
        expect(tool.structuredContent).toMatchObject({ errors: [{ pointer: '/id', code }] });
      }
    });
  });

  describe('the audit line', () => {
    let log: jest.SpyInstance;
    beforeEach(() => {
      log = jest.spyOn(Logger.prototype, 'log');
    });
    afterEach(() => log.mockRestore());
    const auditLines = () => log.mock.calls.filter(([line]) => (line as Json)?.audit === 'lead_read').map(([line]) => line);

    it('records each read like REST, and nothing for a refused call', async () => {
      const page = await call('list_leads', { email: 'ana@EXAMPLE.com', since: '2026-01-01T00:00:00-03:00', limit: 5 }, reader);
      const id = (message(page).result.structuredContent as Json).data[0].id;
      const one = await call('get_lead', { id }, reader);
      await call('list_leads', {}, agent);
      await call('list_leads', { limit: 0 }, reader);
      expect(auditLines()).toEqual([
        {
          audit: 'lead_read',
          route: 'MCP list_leads',
          client_id: 'crm-reader',
          request_id: page.headers['x-request-id'],
          filters: { since: '2026-01-01T03:00:00.000Z', until: null, origem: null, email_filter: true, screening: 'accepted', channel: null, search: false },
          rows: 1,
        },
        {
          audit: 'lead_read',
          route: 'MCP get_lead',
          client_id: 'crm-reader',
          request_id: one.headers['x-request-id'],
          filters: { since: null, until: null, origem: null, email_filter: false },
          rows: 1,
          lead_id: id,
        },
      ]);
      expect(JSON.stringify(auditLines()).toLowerCase()).not.toMatch(/example\.com|ana/);
    });
  });
});

describe('list_leads answers are bounded by MAX_ANSWER_BYTES', () => {
  let t: TestApp;
  let reader: string;
  beforeAll(async () => {
    t = await startTestApp({ MAX_ANSWER_BYTES: '65536' });
    reader = await operatorToken(t, 'leads:read');
    // 24 leads of about 4 KB each: one page of them, in the answer twice, is over 64 KiB.
    const rows: Lead[] = Array.from({ length: 24 }, (_, i) => storedLead(i, { mensagem: 'x'.repeat(4000), receivedAt: new Date(Date.UTC(2020, 0, 1, 0, i)) }));
    await t.dataSource.getRepository(Lead).insert(rows);
  });
  afterAll(() => t.close());

  const call = (args: Json) =>
    t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', Authorization: `Bearer ${reader}` })
      .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_leads', arguments: args } }))
      .then(expectMcpContract);

  it('refuses a page too large with an isError result that says what to do, and answers a smaller one', async () => {
    const res = await call({ limit: 24 });
    const tool = message(res).result;
    expect(tool.isError).toBe(true);
    expect(tool.structuredContent).toEqual({
      code: 'answer_too_large',
      detail: expect.stringMatching(
        /^The answer to list_leads would be about \d+ bytes, over this server's limit of 65536 \(MAX_ANSWER_BYTES\); read it at http:\/\/leads\.test\/api\/v1\/leads instead or ask for a smaller limit\.$/,
      ),
    });
    expect(res.text.length).toBeLessThan(2000);
    const small = message(await call({ limit: 5 })).result;
    expect(small.isError).toBe(false);
    expect(small.structuredContent.data).toHaveLength(5);
  });
});
