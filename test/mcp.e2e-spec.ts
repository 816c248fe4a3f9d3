import { randomInt } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { parseList } from 'structured-headers';
import type { Response } from 'supertest';
import { DocsService } from '../src/docs/docs.service.js';
import { CONTRACT, contractSchema, expectContract } from './support/contract.js';
import { freePort } from './support/server-process.js';
import { countLeads, ON_POSTGRES, startTestApp, TestApp } from './support/test-app.js';
import { settledWebhooks } from './support/webhook-receiver.js';

/**
 * The Model Context Protocol server and server card (docs/decisions/0017-mcp-stateless-over-the-same-services.md): the
 * SDK client over streamable HTTP in both protocol eras (2025 `initialize`, 2026-07-28 stateless), the transport's HTTP
 * edges, shared auth and rate limits, and the card.
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
const CARD_TYPE = 'application/mcp-server-card+json';
const TOOLS = ['get_doc', 'get_service_health', 'get_service_info', 'search_docs', 'submit_lead', 'validate_lead'];
const FULL_LEAD = {
  nome: '  Maria   Fernanda Souza ',
  email: 'maria.souza@SouzaEFilhos.com.BR',
  telefone: '+55 (11) 98765-4321',
  empresa: 'Souza & Filhos',
  mensagem: 'Olá!\nPodem me ligar?',
  origem: 'site',
};
const ACCEPT_BOTH = 'application/json, text/event-stream';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } },
};

/** A 2025-era tools/call (sent with MCP-Protocol-Version: 2025-11-25 or none). */
const TOOL_CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_service_info', arguments: {} } };

type Era = 'legacy' | 'modern';

/** A client address of its own for a test, so counters (in Redis, shared by every run) never collide. */
const clientIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function rateLimitName(res: Response): string {
  const [[policy]] = parseList(String(res.headers['ratelimit-policy']));
  const [[name]] = parseList(String(res.headers['ratelimit']));
  expect(name).toBe(policy);
  return name as string;
}

/** The JSON-RPC messages of a /mcp response, whether it came as application/json or as an SSE stream. */
function messages(res: Response): Array<Record<string, any>> {
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    return res.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
  }
  return [res.body];
}

/**
 * expectContract, and for an SSE answer (whose body the generic check cannot read) each event's JSON-RPC message
 * against the contract's JsonRpcResponse too.
 */
function expectMcpContract(res: Response): Response {
  expectContract(res);
  if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const validate = contractSchema('/components/schemas/JsonRpcResponse');
    const all = messages(res);
    expect(all.length).toBeGreaterThan(0);
    for (const message of all) {
      if (!validate(message)) throw new Error(`SSE message does not match JsonRpcResponse: ${JSON.stringify(validate.errors)}\n${res.text.slice(0, 300)}`);
    }
  }
  return res;
}

/** The text of a tool result's content block, or of a resource's contents entry. */
const text = (result: CallToolResult | { contents: Array<Record<string, unknown>> }, index = 0): string =>
  String((('content' in result ? result.content : result.contents) as Array<{ text?: unknown }>)[index].text);

async function agentToken(t: TestApp, ip?: string): Promise<{ token: string; registrationId: string }> {
  const headers: Record<string, string> = ip ? { 'X-Forwarded-For': ip } : {};
  const registered = await t.http.post('/api/v1/agent/identity').set(headers).send({ type: 'anonymous' }).then(expectContract);
  expect(registered.status).toBeLessThan(300);
  const token = await t.http
    .post('/oauth2/token')
    .set(headers)
    .type('form')
    .send({ grant_type: JWT_BEARER, assertion: registered.body.identity_assertion })
    .then(expectContract);
  expect(token.status).toBe(200);
  return { token: token.body.access_token, registrationId: registered.body.registration_id };
}

describe('MCP server (streamable HTTP at /mcp) and server card', () => {
  let t: TestApp;
  let BASE: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    // The SDK client talks to a real socket, so PUBLIC_BASE_URL is the listening origin (it also passes the Host check).
    const port = await freePort();
    BASE = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: BASE });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await t.close();
  });

  const sql = (query: string) => (ON_POSTGRES ? query : query.replace(/\$\d+/g, '?'));
  const leadRow = async (id: string) => (await t.dataSource.query(sql('SELECT * FROM leads WHERE id = $1'), [id]))[0];
  const docs = () => t.app.get(DocsService);

  async function connect(era: Era, token?: string): Promise<Client> {
    const client = new Client({ name: 'leads-e2e', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
    const transport = new StreamableHTTPClientTransport(
      new URL(`${BASE}/mcp`),
      token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
    );
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** A raw JSON-RPC POST, as a client library would send it. */
  const rpc = (body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', ...headers })
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  describe.each<Era>(['legacy', 'modern'])('with the SDK client, %s era', (era) => {
    let client: Client;
    beforeAll(async () => {
      client = await connect(era);
    });

    it('negotiates the expected revision and reports the server card’s name and version', async () => {
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
      const card = (await t.http.get('/.well-known/mcp/server-card.json')).body;
      const info = client.getServerVersion()!;
      expect(info.version).toBe(card.version);
      expect(info.version).toBe(t.config.version);
      expect(card.name.endsWith(`/${info.name}`)).toBe(true);
      expect(client.getInstructions()).toMatch(/validate_lead before submit_lead/);
      // ping exists only in the 2025 revisions; 2026-07-28 has server/discover instead.
      if (era === 'legacy') await expect(client.ping()).resolves.toBeDefined();
      else expect((await client.discover()).supportedVersions).toContain('2026-07-28');
    });

    it('lists the six tools, each with all four annotations, the lead tools with the contract’s LeadInput schema', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
      for (const tool of tools) {
        expect(tool.description).toEqual(expect.any(String));
        expect(tool.inputSchema.type).toBe('object');
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
          expect(typeof tool.annotations?.[hint]).toBe('boolean');
        }
        expect(tool.annotations?.destructiveHint).toBe(false);
        expect(tool.annotations?.openWorldHint).toBe(false);
        expect(tool.annotations?.readOnlyHint).toBe(tool.name !== 'submit_lead');
      }
      // The contract's LeadInput with its references written in: a tool's schema must stand alone.
      const schemas = CONTRACT.components.schemas as Record<string, unknown>;
      const inline = (json: unknown): unknown => {
        if (Array.isArray(json)) return json.map(inline);
        if (!json || typeof json !== 'object') return json;
        const { $ref } = json as { $ref?: string };
        if ($ref) return inline(schemas[$ref.replace('#/components/schemas/', '')]);
        return Object.fromEntries(Object.entries(json).map(([key, value]) => [key, inline(value)]));
      };
      const leadInput = inline(schemas.LeadInput);
      expect(JSON.stringify(leadInput)).toContain('utm_campaign');
      expect(JSON.stringify(leadInput)).not.toContain('$ref');
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(byName.validate_lead.inputSchema).toEqual(leadInput);
      expect(byName.submit_lead.inputSchema).toEqual(leadInput);
      expect(byName.submit_lead.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
      expect(byName.submit_lead.description).toMatch(/consent/);
      expect(byName.submit_lead.description).toMatch(/validate_lead/);
    });

    it('validate_lead returns what POST /api/v1/sandbox returns, as structuredContent and as its text mirror', async () => {
      const result = (await client.callTool({ name: 'validate_lead', arguments: FULL_LEAD })) as CallToolResult;
      const rest = await t.http.post('/api/v1/sandbox').send(FULL_LEAD).then(expectContract);
      expect(rest.status).toBe(200);
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toEqual(rest.body);
      expect(JSON.parse(text(result))).toEqual(result.structuredContent);
    });

    it('validate_lead with invalid or missing fields is an isError result naming the field pointers, like the sandbox’s 422', async () => {
      for (const args of [{ nome: '', email: 'nope', telefone: 'x' }, {}, { nome: 'Ana', email: 'ana@exemplo.com', extra: 1 }, { nome: 5, email: ['a'] }]) {
        const result = (await client.callTool({ name: 'validate_lead', arguments: args })) as CallToolResult;
        const rest = await t.http.post('/api/v1/sandbox').send(args).then(expectContract);
        expect(rest.status).toBe(422);
        expect(result.isError).toBe(true);
        const pointers = rest.body.errors.map((error: { pointer: string }) => error.pointer);
        expect(pointers.length).toBeGreaterThan(0);
        expect(result.structuredContent).toMatchObject({ valid: false, errors: rest.body.errors });
        for (const pointer of pointers) expect(text(result)).toContain(`"${pointer}"`);
      }
    });

    it('validate_lead refuses hostile lead content as the sandbox does, the padded telephone answered at once', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ nome: 'Ana', email: 'ana@exemplo.com', telefone: `${' '.repeat(2500)}12345678x` }, '/telefone:invalid_format'],
        [{ nome: 'Ana', email: 'ana@exemplo.com', telefone: `${' '.repeat(15000)}12345678x` }, '/telefone:invalid_format'],
        [{ nome: 'Ana', email: 'ana@exemplo.com', telefone: '((((((((' }, '/telefone:invalid_format'],
        [{ nome: '\u200b\u3164\u0301', email: 'ana@exemplo.com' }, '/nome:too_short'],
        [{ nome: 'Ana\u{e0069}\u{e0067}', email: 'ana@exemplo.com' }, '/nome:invalid_characters'],
        [{ nome: 'Ana', email: 'ana@[1.2.3.4]' }, '/email:invalid_format'],
        [{ nome: 'Ana', email: `${'a'.repeat(65)}@exemplo.com` }, '/email:invalid_format'],
      ];
      for (const [args, expected] of cases) {
        const result = (await client.callTool({ name: 'validate_lead', arguments: args })) as CallToolResult;
        expect(result.isError).toBe(true);
        const errors = (result.structuredContent as { errors: { pointer: string; code: string }[] }).errors;
        expect(errors.map((e) => `${e.pointer}:${e.code}`)).toEqual([expected]);
        if (Buffer.byteLength(JSON.stringify(args)) < 32 * 1024) {
          const rest = await t.http.post('/api/v1/sandbox').send(args).then(expectContract);
          expect(rest.body.errors).toEqual(errors);
        }
      }
    });

    it('submit_lead stores the lead (and an invalid one is an isError result that stores nothing)', async () => {
      const before = await countLeads(t.dataSource);
      const invalid = (await client.callTool({ name: 'submit_lead', arguments: { nome: 'Ana', email: 'not-an-email' } })) as CallToolResult;
      expect(invalid.isError).toBe(true);
      expect((invalid.structuredContent as { errors: Array<{ pointer: string }> }).errors.map((e) => e.pointer)).toEqual(['/email']);
      expect(await countLeads(t.dataSource)).toBe(before);

      const result = (await client.callTool({ name: 'submit_lead', arguments: { nome: 'Ana', email: 'ana@exemplo.com' } })) as CallToolResult;
      expect(result.isError).toBe(false);
      const receipt = result.structuredContent as { id: string };
      expect(receipt.id).toEqual(expect.any(String));
      expect(JSON.parse(text(result))).toEqual(receipt);
      expect(await countLeads(t.dataSource)).toBe(before + 1);
      expect(await leadRow(receipt.id)).toMatchObject({ nome: 'Ana', email: 'ana@exemplo.com', registration_id: null, channel: 'mcp' });
    });

    it('submit_lead takes legal bases, a consent wording and a context, and refuses a bad one with its pointer', async () => {
      const consent = { category: 'communications', type: 'consent', status: 'granted' };
      const bad = (await client.callTool({
        name: 'submit_lead',
        arguments: { nome: 'Ana', email: 'ana@exemplo.com', legal_bases: [consent, consent] },
      })) as CallToolResult;
      expect(bad.isError).toBe(true);
      expect((bad.structuredContent as { errors: Array<{ pointer: string; code: string }> }).errors).toEqual([
        expect.objectContaining({ pointer: '/legal_bases/1/category', code: 'duplicate' }),
      ]);
      const result = (await client.callTool({
        name: 'submit_lead',
        arguments: { nome: 'Ana', email: 'ana@exemplo.com', legal_bases: [consent], consent_text: 'Aceito.', context: { utm_source: 'agente' } },
      })) as CallToolResult;
      expect(result.isError).toBe(false);
      const row = await leadRow((result.structuredContent as { id: string }).id);
      expect(JSON.parse(row.context as string)).toEqual({ utm_source: 'agente' });
      expect(JSON.parse(row.legal_bases as string)).toEqual([expect.objectContaining({ ...consent, channel: 'mcp' })]);
    });

    it('submit_lead with a bearer token stores the lead as the agent’s', async () => {
      const { token, registrationId } = await agentToken(t);
      const agent = await connect(era, token);
      const result = (await agent.callTool({ name: 'submit_lead', arguments: { nome: 'Bia', email: 'bia@exemplo.com' } })) as CallToolResult;
      expect(result.isError).toBe(false);
      expect(await leadRow((result.structuredContent as { id: string }).id)).toMatchObject({ nome: 'Bia', registration_id: registrationId, channel: 'mcp' });
    });

    it('get_service_health and get_service_info answer what GET /api/v1/health and /api/v1/info do', async () => {
      await settledWebhooks(() => t.http.get('/api/v1/health'));
      const health = (await client.callTool({ name: 'get_service_health', arguments: {} })) as CallToolResult;
      const restHealth = await t.http.get('/api/v1/health').then(expectContract);
      expect(health.isError).toBe(false);
      expect(health.structuredContent).toEqual(restHealth.body);
      expect(JSON.parse(text(health))).toEqual(health.structuredContent);

      const info = (await client.callTool({ name: 'get_service_info', arguments: {} })) as CallToolResult;
      const restInfo = await t.http.get('/api/v1/info').then(expectContract);
      expect(info.isError).toBe(false);
      expect(info.structuredContent).toEqual(restInfo.body);
      expect(JSON.parse(text(info))).toEqual(info.structuredContent);

      // They take no arguments; unexpected ones are ignored rather than turned into a protocol error.
      const extra = (await client.callTool({ name: 'get_service_info', arguments: { unexpected: 1 } })) as CallToolResult;
      expect(extra.isError).toBe(false);
    });

    it('search_docs finds pages (all without a query); a non-string query is an isError result naming /query', async () => {
      const all = (await client.callTool({ name: 'search_docs', arguments: {} })) as CallToolResult;
      expect(all.isError).toBe(false);
      const pages = (all.structuredContent as { pages: Array<{ slug: string }> }).pages;
      expect(pages.map((page) => page.slug)).toEqual(
        docs()
          .search()
          .map((page) => page.slug),
      );

      const found = (await client.callTool({ name: 'search_docs', arguments: { query: 'token' } })) as CallToolResult;
      expect(found.isError).toBe(false);
      const slugs = (found.structuredContent as { pages: Array<{ slug: string }> }).pages.map((page) => page.slug);
      expect(slugs).toEqual(
        docs()
          .search('token')
          .map((page) => page.slug),
      );
      expect(slugs).toContain('agents');

      const invalid = (await client.callTool({ name: 'search_docs', arguments: { query: 5 } })) as CallToolResult;
      expect(invalid.isError).toBe(true);
      expect(invalid.structuredContent).toMatchObject({ errors: [{ pointer: '/query' }] });
      expect(text(invalid)).toContain('"/query"');
    });

    it('get_doc returns a page’s Markdown; an unknown or missing slug is an isError result naming /slug', async () => {
      const page = docs().find('agents')!;
      const result = (await client.callTool({ name: 'get_doc', arguments: { slug: 'agents' } })) as CallToolResult;
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toEqual({ slug: 'agents', title: page.title, url: page.url, markdown: page.markdown });
      for (const args of [{ slug: 'no-such-page' }, {}, { slug: 42 }]) {
        const invalid = (await client.callTool({ name: 'get_doc', arguments: args })) as CallToolResult;
        expect(invalid.isError).toBe(true);
        expect(invalid.structuredContent).toMatchObject({ errors: [{ pointer: '/slug' }] });
      }
    });

    it('an unknown tool is an error, not a crash', async () => {
      const outcome = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
        (result) => ({ result: result as CallToolResult }),
        (error: unknown) => ({ error }),
      );
      // Either form is allowed by the spec revisions; it must say which tool.
      if ('result' in outcome) expect(outcome.result.isError).toBe(true);
      else expect(String(outcome.error)).toMatch(/no_such_tool/);
    });

    it('lists the OpenAPI, site and every docs page as resources, and the docs template', async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((resource) => resource.uri);
      expect(uris).toEqual(
        expect.arrayContaining([
          'leads://openapi',
          'leads://site',
          ...docs()
            .search()
            .map((page) => `leads://docs/${page.slug}`),
        ]),
      );
      expect(uris).toHaveLength(2 + docs().search().length);
      for (const resource of resources) expect(resource.mimeType).toEqual(expect.any(String));
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['leads://docs/{slug}']);
    });

    it('reads leads://openapi as the served /docs/openapi-leads.json and leads://site as GET /api/v1/info', async () => {
      const openapi = await client.readResource({ uri: 'leads://openapi' });
      const served = await t.http.get('/docs/openapi-leads.json').then(expectContract);
      expect(openapi.contents[0]).toMatchObject({ uri: 'leads://openapi', mimeType: 'application/json' });
      expect(JSON.parse(text(openapi))).toEqual(served.body);

      const site = await client.readResource({ uri: 'leads://site' });
      const info = await t.http.get('/api/v1/info').then(expectContract);
      expect(site.contents[0]).toMatchObject({ uri: 'leads://site', mimeType: 'application/json' });
      expect(JSON.parse(text(site))).toEqual(info.body);
    });

    it('reads every docs page as the DocsService Markdown; an unknown page or URI is a resource-not-found error', async () => {
      for (const page of docs().search()) {
        const read = await client.readResource({ uri: `leads://docs/${page.slug}` });
        expect(read.contents).toEqual([{ uri: `leads://docs/${page.slug}`, mimeType: 'text/markdown', text: page.markdown }]);
      }
      for (const uri of ['leads://docs/no-such-page', 'leads://nothing']) {
        await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
      }
    });

    it('offers the capture_lead prompt, which walks through consent, validate_lead and submit_lead', async () => {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name)).toEqual(['capture_lead']);
      expect(prompts[0].description).toEqual(expect.any(String));
      const prompt = await client.getPrompt({ name: 'capture_lead', arguments: { contexto: 'whatsapp' } });
      expect(prompt.messages).toHaveLength(1);
      const body = String((prompt.messages[0].content as { text: string }).text);
      expect(body).toContain('whatsapp');
      expect(body).toMatch(/consent/);
      expect(body.indexOf('validate_lead')).toBeGreaterThan(-1);
      expect(body.indexOf('submit_lead')).toBeGreaterThan(body.indexOf('validate_lead'));
      const bare = await client.getPrompt({ name: 'capture_lead', arguments: {} });
      expect(String((bare.messages[0].content as { text: string }).text)).not.toContain('context:');
    });
  });

  describe('a lead submitted through MCP is stored exactly like one through REST', () => {
    /** All but the id, the times and the channel (which tells the two surfaces apart). */
    const normalised = (row: Record<string, unknown>) => {
      const { id: _id, received_at: _receivedAt, screening_decided_at: _decidedAt, announced_at: _announcedAt, channel: _channel, ...rest } = row;
      return rest;
    };

    it.each<Era>(['legacy', 'modern'])('anonymously and with a bearer token (%s era)', async (era) => {
      // A message of each era's own: more than 5 identical leads from one address would be held (duplicate_burst).
      for (const input of [
        { ...FULL_LEAD, mensagem: `${FULL_LEAD.mensagem} (${era})` },
        { nome: 'Ana', email: 'ana@Exemplo.com', mensagem: era },
      ]) {
        const viaRest = await t.http.post('/api/v1/lead').send(input).then(expectContract);
        expect(viaRest.status).toBe(201);
        const viaMcp = (await (await connect(era)).callTool({ name: 'submit_lead', arguments: input })) as CallToolResult;
        expect(viaMcp.isError).toBe(false);
        const restRow = await leadRow(viaRest.body.id);
        const mcpRow = await leadRow((viaMcp.structuredContent as { id: string }).id);
        expect(normalised(mcpRow)).toEqual(normalised(restRow));
        expect([restRow.channel, mcpRow.channel]).toEqual(['api', 'mcp']);
        expect(mcpRow.registration_id).toBeNull();
        // The receipt has the REST receipt's shape.
        expect(Object.keys(viaMcp.structuredContent!).sort()).toEqual(Object.keys(viaRest.body).sort());
      }

      const { token, registrationId } = await agentToken(t);
      const viaRest = await t.http.post('/api/v1/lead').set('Authorization', `Bearer ${token}`).send(FULL_LEAD).then(expectContract);
      expect(viaRest.status).toBe(201);
      const viaMcp = (await (await connect(era, token)).callTool({ name: 'submit_lead', arguments: FULL_LEAD })) as CallToolResult;
      expect(viaMcp.isError).toBe(false);
      const restRow = await leadRow(viaRest.body.id);
      const mcpRow = await leadRow((viaMcp.structuredContent as { id: string }).id);
      expect(mcpRow.registration_id).toBe(registrationId);
      expect(normalised(mcpRow)).toEqual(normalised(restRow));
      expect(mcpRow).toMatchObject({ nome: 'Maria Fernanda Souza', email: 'maria.souza@souzaefilhos.com.br', telefone_e164: '+5511987654321', origem: 'site' });
    });
  });

  describe('HTTP edges of /mcp', () => {
    it('GET and DELETE /mcp answer 405 problems with Allow: POST', async () => {
      for (const res of [await t.http.get('/mcp').set('Accept', 'text/event-stream'), await t.http.delete('/mcp')]) {
        expectContract(res);
        expect(res.status).toBe(405);
        expect(res.headers.allow).toBe('POST');
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
      }
    });

    it('answers initialize over SSE (2025 era) and a notification with 202 and no body', async () => {
      const init = await rpc(INIT).then(expectMcpContract);
      expect(init.status).toBe(200);
      expect(init.headers['mcp-session-id']).toBeUndefined();
      const [message] = messages(init);
      expect(message).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2025-11-25', serverInfo: { name: 'leads', version: t.config.version } },
      });

      const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'MCP-Protocol-Version': '2025-11-25' }).then(expectMcpContract);
      expect(note.status).toBe(202);
      expect(note.text).toBeFalsy();
    });

    it('answers a 2026-07-28 request as application/json, and a header that contradicts the body with 400', async () => {
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const headers = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_service_health' };
      const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_service_health', arguments: {}, _meta: meta } };
      const ok = await rpc(body, headers).then(expectMcpContract);
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toMatch(/^application\/json/);
      expect(ok.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: false, structuredContent: { status: 'ok' } } });

      const mismatch = await rpc(body, { ...headers, 'Mcp-Name': 'get_service_info' }).then(expectMcpContract);
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.error.code).toBe(-32020);

      const unsupported = await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, { 'MCP-Protocol-Version': '1999-01-01' }).then(expectMcpContract);
      expect(unsupported.status).toBe(400);
      expect(unsupported.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });

      const unknown = await rpc(
        { jsonrpc: '2.0', id: 9, method: 'foo/bar', params: { _meta: meta } },
        { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'foo/bar' },
      ).then(expectMcpContract);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32601 } });

      for (const notRpc of [42, { foo: 1 }]) {
        const invalid = await rpc(notRpc).then(expectMcpContract);
        expect(invalid.status).toBe(400);
        expect(invalid.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      }
    });

    it('rejects a foreign Origin with 403 and accepts the service’s own origin or none', async () => {
      const { port } = new URL(BASE);
      // Whole origins are compared: the right host with another port or scheme is another origin.
      for (const origin of ['https://evil.example', 'http://127.0.0.1:9999', `https://127.0.0.1:${port}`, `http://localhost:${port}`, 'null']) {
        const foreign = await rpc(INIT, { Origin: origin }).then(expectMcpContract);
        expect([origin, foreign.status]).toEqual([origin, 403]);
        expect(foreign.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringMatching(/^Invalid Origin/) } });
      }
      const own = await rpc(INIT, { Origin: BASE }).then(expectMcpContract);
      expect(own.status).toBe(200);
      expect((await rpc(INIT).then(expectMcpContract)).status).toBe(200);
      // And a foreign Host (DNS rebinding through a name that resolves here).
      const host = await rpc(INIT, { Host: 'evil.example' }).then(expectMcpContract);
      expect(host.status).toBe(403);
    });

    it('serves a call without Authorization anonymously: a tool call under the "anonymous" policy, initialize under "mcp_housekeeping"', async () => {
      const res = await rpc(TOOL_CALL).then(expectMcpContract);
      expect(res.status).toBe(200);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(rateLimitName(res)).toBe('anonymous');
      expect(rateLimitName(await rpc(INIT).then(expectMcpContract))).toBe('mcp_housekeeping');
    });

    it('answers a bad bearer token with 401 and the REST challenge', async () => {
      const challenge = `Bearer error="invalid_token", resource_metadata="${BASE}/.well-known/oauth-protected-resource"`;
      const res = await rpc(INIT, { Authorization: 'Bearer not-a-token' }).then(expectMcpContract);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(challenge);
      expect(res.body).toMatchObject({ code: 'invalid_token', status: 401 });
      const rest = await t.http
        .post('/api/v1/lead')
        .set('Authorization', 'Bearer not-a-token')
        .send({ nome: 'Ana', email: 'ana@exemplo.com' })
        .then(expectContract);
      expect(rest.headers['www-authenticate']).toBe(res.headers['www-authenticate']);
    });

    it('serves a valid bearer token as the agent, under the "agent" rate-limit policy', async () => {
      const { token } = await agentToken(t);
      const res = await rpc(TOOL_CALL, { Authorization: `Bearer ${token}` }).then(expectMcpContract);
      expect(res.status).toBe(200);
      expect(rateLimitName(res)).toBe('agent');
      expect(rateLimitName(await rpc(INIT, { Authorization: `Bearer ${token}` }).then(expectMcpContract))).toBe('mcp_housekeeping');
    });

    it('answers malformed JSON with 400 and a JSON-RPC parse error (-32700, id null)', async () => {
      for (const body of ['{"jsonrpc":', '', '{"jsonrpc":"2.0","id":1,"method":"ping"']) {
        const res = await rpc(body).then(expectMcpContract);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
      }
    });

    it('leaves content negotiation to the SDK: 406 for a wrong Accept, 415 for a non-JSON body', async () => {
      const notAcceptable = await rpc(INIT, { Accept: 'application/json' }).then(expectMcpContract);
      expect(notAcceptable.status).toBe(406);
      expect(notAcceptable.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
      const html = await rpc(INIT, { Accept: 'text/html' }).then(expectMcpContract);
      expect(html.status).toBe(406);

      for (const type of ['text/plain', 'application/json; charset=latin1']) {
        const unsupported = await rpc(JSON.stringify(INIT), { 'Content-Type': type }).then(expectMcpContract);
        expect(unsupported.status).toBe(415);
        expect(unsupported.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number) } });
      }
    });
  });

  describe('server card', () => {
    const URLS = ['/.well-known/mcp/server-card.json', '/mcp/server-card'];

    it('is the same valid card at both URLs, matching the running server and PUBLIC_BASE_URL', async () => {
      const [wellKnown, transport] = await Promise.all(URLS.map((url) => t.http.get(url).then(expectContract)));
      expect(wellKnown.status).toBe(200);
      expect(transport.status).toBe(200);
      expect(transport.text).toBe(wellKnown.text);
      const card = wellKnown.body;
      // The required members and rules of the draft schema that $schema names
      // (github.com/modelcontextprotocol/experimental-ext-server-card).
      expect(card.$schema).toBe(SERVER_CARD_SCHEMA);
      expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
      expect(card.name.length).toBeGreaterThanOrEqual(3);
      expect(card.name.length).toBeLessThanOrEqual(200);
      expect(typeof card.version).toBe('string');
      expect(card.version.length).toBeLessThanOrEqual(255);
      expect(card.description.length).toBeGreaterThanOrEqual(1);
      expect(card.description.length).toBeLessThanOrEqual(100);

      const init = messages(await rpc(INIT))[0];
      expect(card.version).toBe(init.result.serverInfo.version);
      expect(card.name.split('/')[1]).toBe(init.result.serverInfo.name);
      expect(card.remotes).toEqual([
        expect.objectContaining({
          type: 'streamable-http',
          url: `${BASE}/mcp`,
          supportedProtocolVersions: expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18']),
        }),
      ]);
      expect(card.remotes[0].headers).toEqual([expect.objectContaining({ name: 'Authorization', isRequired: false, isSecret: true })]);
      // Advisory, and no secrets: no token or key material.
      expect(JSON.stringify(card)).not.toMatch(/eyJ|BEGIN|"token"/);
    });

    it.each(URLS)('%s: CORS-open, cacheable, with an ETag, 304 on If-None-Match, and negotiated media type', async (url) => {
      const res = await t.http.get(url).set('Origin', 'https://elsewhere.example').then(expectContract);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
      expect(res.headers.vary).toMatch(/Accept/);
      const etag = res.headers.etag;
      expect(etag).toMatch(/^"[^"]+"$/);

      for (const match of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const notModified = await t.http.get(url).set('If-None-Match', match).then(expectContract);
        expect(notModified.status).toBe(304);
        expect(notModified.text).toBeFalsy();
        expect(notModified.headers.etag).toBe(etag);
        expect(notModified.headers['cache-control']).toBe('public, max-age=3600');
      }
      const changed = await t.http.get(url).set('If-None-Match', '"stale"').then(expectContract);
      expect(changed.status).toBe(200);

      const asCard = await t.http.get(url).set('Accept', CARD_TYPE).then(expectContract);
      expect(asCard.headers['content-type']).toMatch(new RegExp(`^${CARD_TYPE.replace(/[+.]/g, '\\$&')}`));
      expect(JSON.parse(asCard.text)).toEqual(res.body);
      const asJson = await t.http.get(url).set('Accept', 'application/json').then(expectContract);
      expect(asJson.headers['content-type']).toMatch(/^application\/json/);
      expect(asJson.body).toEqual(res.body);
      expect(res.headers['content-type']).toMatch(/^application\/json/); // no preference: plain JSON
      const preferred = await t.http.get(url).set('Accept', `application/json;q=0.5, ${CARD_TYPE}`).then(expectContract);
      expect(preferred.headers['content-type']).toMatch(/^application\/mcp-server-card\+json/);
    });
  });
});

describe('MCP rate accounting: work spends the REST budget, housekeeping its own allowance, batches are refused', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', RATE_LIMIT_ANONYMOUS: '3/60s', RATE_LIMIT_MCP_HOUSEKEEPING: '5/60s' });
  });
  afterAll(() => t.close());

  const mcp = (ip: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', 'X-Forwarded-For': ip, ...headers })
      .send(JSON.stringify(body))
      .then(expectMcpContract);
  const submit = (id: number, email: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'submit_lead', arguments: { nome: 'Ana', email } },
  });
  const leadsWith = async (email: string) => {
    const [{ n }] = await t.dataSource.query(`SELECT COUNT(*) AS n FROM leads WHERE email = ${ON_POSTGRES ? '$1' : '?'}`, [email]);
    return Number(n);
  };

  it('a well-behaved anonymous agent gets its whole quota of tool calls: initialize, initialized and tools/list are housekeeping', async () => {
    const ip = clientIp();
    const init = await mcp(ip, INIT);
    expect(init.status).toBe(200);
    expect(String(init.headers.ratelimit)).toMatch(/^"mcp_housekeeping";r=4;/);
    expect(String(init.headers['ratelimit-policy'])).toBe('"mcp_housekeeping";q=5;w=60');
    expect((await mcp(ip, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const list = await mcp(ip, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(String(list.headers.ratelimit)).toMatch(/^"mcp_housekeeping";r=2;/);

    const email = `quota-${randomInt(1e9)}@exemplo.com`;
    for (let i = 0; i < 3; i++) {
      const call = await mcp(ip, submit(10 + i, email));
      expect(call.status).toBe(200);
      expect(messages(call)[0]).toMatchObject({ id: 10 + i, result: { isError: false } });
      expect(String(call.headers.ratelimit)).toMatch(new RegExp(`^"anonymous";r=${2 - i};`));
    }
    const refused = await mcp(ip, submit(13, email));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(rateLimitName(refused)).toBe('anonymous');
    expect(await leadsWith(email)).toBe(3);
    // Reading a resource and getting a prompt are work too; listing is not.
    expect((await mcp(ip, { jsonrpc: '2.0', id: 14, method: 'resources/read', params: { uri: 'leads://site' } })).status).toBe(429);
    expect((await mcp(ip, { jsonrpc: '2.0', id: 15, method: 'prompts/get', params: { name: 'capture_lead' } })).status).toBe(429);
    expect((await mcp(ip, { jsonrpc: '2.0', id: 16, method: 'resources/list' })).status).toBe(200);
  });

  it('MCP work and REST share one budget: two REST calls and one tool call use up a quota of 3', async () => {
    const ip = clientIp();
    for (let i = 0; i < 2; i++) expect((await t.http.get('/api/v1/info').set('X-Forwarded-For', ip).then(expectContract)).status).toBe(200);
    const last = await mcp(ip, TOOL_CALL);
    expect(last.status).toBe(200);
    expect(String(last.headers.ratelimit)).toMatch(/^"anonymous";r=0;/);
    expect((await mcp(ip, TOOL_CALL)).status).toBe(429);
    expect((await t.http.get('/api/v1/info').set('X-Forwarded-For', ip).then(expectContract)).status).toBe(429);
    // Another client address still has its whole budget.
    expect((await mcp(clientIp(), TOOL_CALL)).status).toBe(200);
  });

  it('housekeeping beyond its own allowance is limited too, without touching the work budget', async () => {
    const ip = clientIp();
    for (let i = 0; i < 5; i++) expect((await mcp(ip, { jsonrpc: '2.0', id: i, method: 'ping' })).status).toBe(200);
    const refused = await mcp(ip, { jsonrpc: '2.0', id: 5, method: 'ping' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(rateLimitName(refused)).toBe('mcp_housekeeping');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    const call = await mcp(ip, TOOL_CALL);
    expect(call.status).toBe(200);
    expect(String(call.headers.ratelimit)).toMatch(/^"anonymous";r=2;/);
  });

  it('housekeeping is one allowance per client address: tokens minted there do not multiply it', async () => {
    const ip = clientIp();
    const tokens = await Promise.all([agentToken(t, ip), agentToken(t, ip), agentToken(t, ip)]);
    const ping = (i: number) => mcp(ip, { jsonrpc: '2.0', id: i, method: 'ping' }, { Authorization: `Bearer ${tokens[i % 3].token}` });
    for (let i = 0; i < 5; i++) expect((await ping(i)).status).toBe(200);
    const refused = await ping(5);
    expect(refused.status).toBe(429);
    expect(rateLimitName(refused)).toBe('mcp_housekeeping');
  });

  it('refuses a JSON-RPC batch with -32600 before any work, spending one housekeeping unit: 100 submit_lead store nothing', async () => {
    const ip = clientIp();
    const email = `batch-${randomInt(1e9)}@exemplo.com`;
    for (const batch of [Array.from({ length: 100 }, (_, i) => submit(i + 1, email)), [TOOL_CALL], []]) {
      const res = await mcp(ip, batch);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batches are not supported/) } });
      expect(rateLimitName(res)).toBe('mcp_housekeeping');
    }
    expect(await leadsWith(email)).toBe(0);
    const info = await mcp(ip, TOOL_CALL);
    expect(String(info.headers.ratelimit)).toMatch(/^"anonymous";r=2;/);
  });
});

describe('MCP answers are bounded by MAX_ANSWER_BYTES, refused before they are built', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The smallest cap allowed: under the contract (about 130 KB as a resource), over every docs page.
    t = await startTestApp({ MAX_ANSWER_BYTES: '65536' });
  });
  afterAll(() => t.close());

  const read = (uri: string) =>
    t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json' })
      .send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri } }))
      .then(expectMcpContract);

  it('refuses resources/read leads://openapi with a JSON-RPC error naming the limit and the HTTP URL that serves it', async () => {
    const res = await read('leads://openapi');
    expect(res.status).toBe(200);
    const [message] = messages(res);
    expect(message).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32602,
        message: expect.stringMatching(
          /^The answer to resources\/read leads:\/\/openapi would be about \d+ bytes, over this server's limit of 65536 \(MAX_ANSWER_BYTES\); read it at http:\/\/leads\.test\/docs\/openapi-leads\.json instead\.$/,
        ),
        data: { uri: 'leads://openapi', maxAnswerBytes: 65536 },
      },
    });
    expect(res.text.length).toBeLessThan(1000);
  });

  it('answers what fits: every docs page as a resource and through get_doc, and the site', async () => {
    const docs = t.app.get(DocsService);
    for (const page of docs.search()) {
      const [message] = messages(await read(`leads://docs/${page.slug}`));
      expect(message.result.contents).toEqual([{ uri: `leads://docs/${page.slug}`, mimeType: 'text/markdown', text: page.markdown }]);
      const tool = await t.http
        .post('/mcp')
        .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json' })
        .send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_doc', arguments: { slug: page.slug } } }))
        .then(expectMcpContract);
      expect(messages(tool)[0].result).toMatchObject({ isError: false, structuredContent: { slug: page.slug, markdown: page.markdown } });
    }
    expect(messages(await read('leads://site'))[0].result.contents[0].uri).toBe('leads://site');
  });
});

describe('MCP Origin check with CORS_ORIGINS set to a list', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: 'https://cliente.example, http://localhost:5173' });
  });
  afterAll(() => t.close());

  const init = (origin: string) =>
    t.http.post('/mcp').set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', Origin: origin }).send(JSON.stringify(INIT)).then(expectMcpContract);

  it('allows exactly the listed origins and the public one; the same hosts under another scheme or port are refused', async () => {
    for (const origin of ['https://cliente.example', 'http://localhost:5173', 'http://leads.test', 'https://cliente.example:443']) {
      expect([origin, (await init(origin)).status]).toEqual([origin, 200]);
    }
    for (const origin of [
      'http://cliente.example',
      'https://cliente.example:8443',
      'http://localhost:5174',
      'https://localhost:5173',
      'https://leads.test',
      'http://leads.test:8080',
    ]) {
      const res = await init(origin);
      expect([origin, res.status]).toEqual([origin, 403]);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    }
  });
});
