/** @database reads: filters, ordering, cursors */
import { Logger } from '@nestjs/common';
import type { Response } from 'supertest';
import { uuidv7 } from '../src/database/uuid-v7.js';
import { Lead } from '../src/leads/lead.entity.js';
import { storedLead } from './support/stored-leads.js';
import type { LeadView } from '../src/leads/lead-reader.service.js';
import { foldEmail } from '../src/leads/lead-rules.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';

/**
 * Operators read stored leads (docs/decisions/0023-lead-read-api.md): GET /api/v1/leads and /api/v1/leads/{id} with a
 * leads:read token, over leads sent through every surface and rows stored with equal timestamps; the query rules and
 * their 400 invalid_query problems; who may read; the audit line. Every response is checked against the contract.
 */

const BASE = 'http://leads.test';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const RESOURCE_METADATA = `resource_metadata="${BASE}/.well-known/oauth-protected-resource"`;
/** The window of the rows stored directly, apart from those sent through the API (which are stored now). */
const WINDOW = { since: '2020-01-01T00:00:00Z', until: '2020-01-02T00:00:00Z' };

describe('reading leads: GET /api/v1/leads and /api/v1/leads/{id}', () => {
  let t: TestApp;
  let reader: string;
  /** The leads sent through the API, newest first, as a reader should see them. */
  let sent: LeadView[];
  /** The rows stored directly in WINDOW, newest first by (received_at, id). */
  let windowIds: string[];

  /** With the reader's token unless another is given; null for none. */
  const get = (path: string, token: string | null = reader) => {
    const req = t.http.get(path);
    return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).then(expectContract);
  };
  const list = (query = '', token?: string) => get(`/api/v1/leads${query}`, token ?? reader);

  async function send(body: object, headers: Record<string, string> = {}): Promise<{ id: string; received_at: string }> {
    const res = await t.http.post('/api/v1/lead').set(headers).send(body).then(expectContract);
    expect(res.status).toBe(201);
    return res.body;
  }

  function view(receipt: { id: string; received_at: string }, fields: Partial<LeadView>): LeadView {
    return {
      id: receipt.id,
      received_at: receipt.received_at,
      nome: 'Ana',
      email: 'ana@example.com',
      telefone: null,
      telefone_e164: null,
      empresa: null,
      mensagem: null,
      origem: null,
      channel: 'api',
      registration_id: null,
      client_id: null,
      legal_bases: [],
      context: {},
      screening: { verdict: 'accepted', reasons: [], decided_by: 'screening', decided_at: receipt.received_at },
      ...fields,
    };
  }

  function expectProblem(res: Response, status: number, code: string): void {
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ status, type: `${BASE}/docs/errors#${code}`, request_id: res.headers['x-request-id'] });
  }

  /** The next page's URL from the Link header, or undefined when there is none. */
  function nextLink(res: Response): string | undefined {
    const link = res.headers.link as string | undefined;
    if (link === undefined) return undefined;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(match).not.toBeNull();
    return match![1];
  }

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read', 'crm-reader');

    const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
    const agentToken = (await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: registration.body.identity_assertion })).body
      .access_token as string;
    const registrationId = registration.body.registration_id as string;

    // One at a time, so that received_at orders them as sent.
    const full = { nome: 'Maria Souza', email: 'Maria@Empresa.COM', telefone: '(11) 98765-4321', empresa: 'Empresa', mensagem: 'Olá', origem: 'site' };
    const stored: LeadView[] = [];
    stored.push(
      view(await send(full), {
        nome: 'Maria Souza',
        email: 'Maria@empresa.com',
        telefone: '(11) 98765-4321',
        telefone_e164: '+5511987654321',
        empresa: 'Empresa',
        mensagem: 'Olá',
        origem: 'site',
      }),
    );
    stored.push(
      view(await send({ nome: 'Ana', email: 'ana@example.com', origem: 'site' }, { Origin: 'https://cliente.example' }), { origem: 'site', channel: 'form' }),
    );
    stored.push(view(await send({ nome: 'Ana', email: 'ana@example.com' }, { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'cors' }), { channel: 'form' }));
    stored.push(
      view(await send({ nome: 'Ana', email: 'ana@example.com', origem: 'Site' }, { 'User-Agent': 'leads-cli/1.0.0 (node v24.21.0)' }), {
        origem: 'Site',
        channel: 'cli',
      }),
    );
    stored.push(view(await send({ nome: 'Ana', email: 'ana@example.com' }, { Authorization: `Bearer ${agentToken}` }), { registration_id: registrationId }));
    const writer = await operatorToken(t, 'leads:write', 'crm-writer');
    stored.push(view(await send({ nome: 'Ana', email: 'ana@example.com' }, { Authorization: `Bearer ${writer}` }), { client_id: 'crm-writer' }));
    const mcp = await t.http
      .post('/mcp')
      .set({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' })
      .send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'submit_lead', arguments: { nome: 'Ana Lima', email: 'ana@example.com' } },
        }),
      );
    expect(mcp.status).toBe(200);
    const result = (/^data: (.*)$/m.exec(mcp.text)?.[1] ?? mcp.text) as string;
    // Another name: a sixth identical (nome, email, mensagem) from one address in 10 minutes would be held (duplicate_burst).
    stored.push(view(JSON.parse(result).result.structuredContent, { nome: 'Ana Lima', channel: 'mcp' }));
    stored.push(view(await send({ nome: 'Élodie', email: 'ÉLODIE@Example.com' }), { nome: 'Élodie', email: 'ÉLODIE@example.com' }));
    stored.push(view(await send({ nome: 'Elodie', email: 'elodie@example.com' }), { nome: 'Elodie', email: 'elodie@example.com' }));
    sent = stored.reverse();

    // Rows stored directly, in runs with equal received_at (only the id orders them), and a millisecond apart.
    const instants = ['2020-01-01T10:00:00.000Z', '2020-01-01T10:00:00.001Z', '2020-01-01T12:00:00.000Z', '2020-01-01T23:59:59.999Z'];
    const rows: Lead[] = Array.from({ length: 60 }, (_, i) => storedLead(i, { origem: i % 3 === 0 ? 'feira' : null, receivedAt: new Date(instants[i % 4]) }));
    // Outside the window on both sides.
    rows.push({ ...rows[0], id: uuidv7(), receivedAt: new Date('2019-12-31T23:59:59.999Z') }, { ...rows[0], id: uuidv7(), receivedAt: new Date(WINDOW.until) });
    await t.dataSource.getRepository(Lead).insert(rows);
    windowIds = rows
      .slice(0, 60)
      .sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime() || (a.id < b.id ? 1 : -1))
      .map((row) => row.id);
  });
  afterAll(() => t.close());

  describe('the list', () => {
    it('shows every lead as stored, newest first, with the surface it came through and who sent it', async () => {
      const res = await list('?limit=200');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.link).toBeUndefined();
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.data.slice(0, sent.length)).toEqual(sent);
      expect(res.body.data).toHaveLength(sent.length + 62);
    });

    it('gives 50 leads by default, and a Link to the next page with the same limit', async () => {
      const res = await list();
      expect(res.body.data).toHaveLength(50);
      expect(nextLink(res)).toBe(`${BASE}/api/v1/leads?limit=50&cursor=${res.body.next_cursor}`);
    });

    it('pages through leads with equal timestamps with no duplicate and no gap, following Link with its filters', async () => {
      const seen: string[] = [];
      let url: string | undefined = `/api/v1/leads?since=${WINDOW.since}&until=${WINDOW.until}&limit=7`;
      let pages = 0;
      while (url !== undefined) {
        const res = await get(url.replace(BASE, ''));
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(7);
        seen.push(...res.body.data.map((lead: LeadView) => lead.id));
        url = nextLink(res);
        if (url !== undefined) {
          expect(url).toBe(`${BASE}/api/v1/leads?since=2020-01-01T00%3A00%3A00.000Z&until=2020-01-02T00%3A00%3A00.000Z&limit=7&cursor=${res.body.next_cursor}`);
        } else expect(res.body.next_cursor).toBeNull();
        pages++;
      }
      expect(pages).toBe(Math.ceil(60 / 7));
      expect(seen).toEqual(windowIds);
    });

    it('pages with next_cursor as well, and shows a lead stored meanwhile on no later page', async () => {
      const first = await list('?limit=3');
      const newer = await send({ nome: 'Bruno', email: 'bruno@example.com' });
      const second = await list(`?limit=3&cursor=${first.body.next_cursor}`);
      const all = (await list('?limit=200')).body.data.map((lead: LeadView) => lead.id);
      expect([...first.body.data, ...second.body.data].map((lead: LeadView) => lead.id)).toEqual(all.slice(1, 7));
      expect(all[0]).toBe(newer.id);
    });

    it('takes since as inclusive and until as exclusive, offsets and fractions included', async () => {
      const ids = async (query: string) => (await list(`?limit=200&${query}`)).body.data.map((lead: LeadView) => lead.id);
      // 2020-01-01T10:00:00Z written in São Paulo and Tokyo time.
      expect(await ids('since=2020-01-01T07:00:00-03:00&until=2020-01-01T19:00:00.0000001%2B09:00')).toEqual(windowIds.slice(-15));
      expect(await ids('since=2020-01-01T10:00:00.001Z&until=2020-01-01T12:00:00Z')).toHaveLength(15);
      expect(await ids('since=2020-01-01T10:00:00.0005Z&until=2020-01-01T10:00:00.001Z')).toEqual([]);
      expect(await ids(`since=${WINDOW.since}&until=${WINDOW.until}`)).toEqual(windowIds);
      expect(await ids(`since=2020-01-01T12:00:00Z&until=2020-01-01T12:00:00Z`)).toEqual([]);
    });

    it('takes the first and the last day there is: every lead', async () => {
      const res = await list('?limit=200&since=0001-01-01&until=9999-12-31');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual((await list('?limit=200')).body.data);
    });

    it('matches origem exactly', async () => {
      const site = await list('?origem=site');
      expect(site.body.data.map((lead: LeadView) => lead.id)).toEqual(sent.filter((lead) => lead.origem === 'site').map((lead) => lead.id));
      expect((await list('?origem=Site')).body.data).toEqual([sent.find((lead) => lead.origem === 'Site')]);
      // 20 in the window, and the one at its end (until is not given here).
      expect((await list(`?origem=feira&since=${WINDOW.since}`)).body.data).toHaveLength(21);
    });

    it('matches the e-mail exactly in any letter case, accents included', async () => {
      const elodie = sent.filter((lead) => foldEmail(lead.email) === 'élodie@example.com');
      expect(elodie.map((lead) => lead.email)).toEqual(['ÉLODIE@example.com']);
      for (const email of ['élodie@example.com', 'ÉLODIE@EXAMPLE.COM', 'E\u0301LODIE@example.com', 'Élodie@Example.Com']) {
        const res = await list(`?email=${encodeURIComponent(email)}`);
        expect([email, res.body.data]).toEqual([email, elodie]);
      }
      expect((await list('?email=elodie@example.com')).body.data.map((lead: LeadView) => lead.email)).toEqual(['elodie@example.com']);
      expect((await list('?email=MARIA@EMPRESA.COM&origem=site')).body.data.map((lead: LeadView) => lead.nome)).toEqual(['Maria Souza']);
      expect((await list('?email=maria@empresa.com&origem=Site')).body.data).toEqual([]);
    });
  });

  describe('one lead', () => {
    it('is the lead as the list shows it, by its id in either letter case', async () => {
      for (const lead of sent) {
        const res = await get(`/api/v1/leads/${lead.id}`);
        expect([res.status, res.body]).toEqual([200, lead]);
        expect(res.headers['cache-control']).toBe('no-store');
      }
      expect((await get(`/api/v1/leads/${sent[0].id.toUpperCase()}`)).body).toEqual(sent[0]);
    });

    // Not 'export': that is the export's route (test/leads-export.e2e-spec.ts), which a leads:read token may not use.
    it.each([uuidv7(), 'not-a-uuid', "1' OR '1'='1", '😀'])('answers 404 lead_not_found for %s', async (id) => {
      const res = await get(`/api/v1/leads/${encodeURIComponent(id)}`);
      expectProblem(res, 404, 'lead_not_found');
      expect(res.body.detail).toBe('No stored lead has this id.');
    });
  });

  describe('a bad query: 400 invalid_query naming each parameter', () => {
    it.each<[string, string, [string, string][]]>([
      ['an unknown parameter', '?foo=1', [['foo', 'unknown_parameter']]],
      ['a parameter of another operation', '?format=csv', [['format', 'unknown_parameter']]],
      ['a bracketed name', '?limit[]=1', [['limit[]', 'unknown_parameter']]],
      ['__proto__', '?__proto__=1', [['__proto__', 'unknown_parameter']]],
      ['constructor', '?constructor=1', [['constructor', 'unknown_parameter']]],
      ['toString', '?toString=1&limit=1', [['toString', 'unknown_parameter']]],
      ['a repeated parameter', '?limit=1&limit=2', [['limit', 'repeated_parameter']]],
      ['a repeated filter', '?origem=a&origem=a', [['origem', 'repeated_parameter']]],
      ['limit 0', '?limit=0', [['limit', 'out_of_range']]],
      ['limit 201', '?limit=201', [['limit', 'out_of_range']]],
      ['a negative limit', '?limit=-1', [['limit', 'out_of_range']]],
      ['a huge limit', `?limit=${'9'.repeat(400)}`, [['limit', 'invalid_format']]],
      ['a fractional limit', '?limit=1.5', [['limit', 'invalid_format']]],
      ['a word for limit', '?limit=ten', [['limit', 'invalid_format']]],
      ['an empty limit', '?limit=', [['limit', 'invalid_format']]],
      ['a hexadecimal limit', '?limit=0x10', [['limit', 'invalid_format']]],
      ['a date that does not exist', '?since=2026-02-29', [['since', 'invalid_format']]],
      ['a date with a zone but no time', '?until=2026-11-22Z', [['until', 'invalid_format']]],
      ['a date in another order', '?since=22/11/2026', [['since', 'invalid_format']]],
      ['a date-time without time zone', '?since=2026-11-22T10:00:00', [['since', 'invalid_format']]],
      ['a day of until before the day of since', '?since=2026-11-24&until=2026-11-22', [['until', 'out_of_range']]],
      ['a day that does not exist', '?until=2026-02-30T00:00:00Z', [['until', 'invalid_format']]],
      ['epoch seconds', '?until=1795000000', [['until', 'invalid_format']]],
      ['until before since', '?since=2026-11-23T00:00:00Z&until=2026-11-22T23:59:59.999Z', [['until', 'out_of_range']]],
      ['an empty origem', '?origem=', [['origem', 'too_short']]],
      ['an origem longer than any stored', `?origem=${'a'.repeat(65)}`, [['origem', 'too_long']]],
      ['an empty e-mail', '?email=', [['email', 'too_short']]],
      // Stored values hold no control characters, and PostgreSQL errs on a NUL in a text parameter.
      ['a NUL in the e-mail', '?email=a%00%40x.com', [['email', 'invalid_format']]],
      ['a control character in origem', '?origem=a%0Ab', [['origem', 'invalid_format']]],
      ['an e-mail longer than any stored', `?email=${'a'.repeat(250)}%40x.com`, [['email', 'too_long']]],
      ['a cursor that is not one', '?cursor=not-a-cursor', [['cursor', 'invalid_cursor']]],
      ['an empty cursor', '?cursor=', [['cursor', 'invalid_cursor']]],
      [
        'several at once, unknown ones last',
        '?zzz=1&limit=0&since=yesterday&email=a&email=b',
        [
          ['limit', 'out_of_range'],
          ['since', 'invalid_format'],
          ['email', 'repeated_parameter'],
          ['zzz', 'unknown_parameter'],
        ],
      ],
    ])('%s', async (_name, query, errors) => {
      const res = await list(query);
      expectProblem(res, 400, 'invalid_query');
      expect(res.body.errors.map((error: { parameter: string; code: string }) => [error.parameter, error.code])).toEqual(errors);
      for (const error of res.body.errors) expect(Object.keys(error).sort()).toEqual(['code', 'detail', 'parameter']);
    });

    it('says what a parameter takes', async () => {
      expect((await list('?limit=500')).body).toMatchObject({
        detail: 'The query has invalid input in limit.',
        errors: [{ parameter: 'limit', code: 'out_of_range', detail: 'limit must be an integer from 1 to 200.' }],
      });
      expect((await list('?since=22-11-2026')).body.errors[0].detail).toBe(
        "since must be a date such as 2026-11-27 (from 00:00 of that day in the service's time zone) or an RFC 3339 date-time with a time zone, such as 2026-11-22T13:45:14Z or 2026-11-22T10:45:14-03:00.",
      );
      expect((await list('?until=tomorrow')).body.errors[0].detail).toBe(
        "until must be a date such as 2026-11-27 (through the end of that day in the service's time zone) or an RFC 3339 date-time with a time zone, such as 2026-11-22T13:45:14Z or 2026-11-22T10:45:14-03:00.",
      );
    });

    it('refuses a cursor altered by one character, or given by a page with other filters', async () => {
      const page = await list('?origem=site&limit=1');
      const cursor: string = page.body.next_cursor;
      expect((await list(`?origem=site&limit=1&cursor=${cursor}`)).status).toBe(200);
      // Another limit is the same listing.
      expect((await list(`?origem=site&limit=5&cursor=${cursor}`)).status).toBe(200);
      // A character in the middle carries six bits of the cursor (the last one may carry padding only).
      const altered = `${cursor.slice(0, 20)}${cursor[20] === 'A' ? 'B' : 'A'}${cursor.slice(21)}`;
      for (const query of [
        `?origem=site&limit=1&cursor=${altered}`,
        `?origem=site&limit=1&cursor=${cursor.slice(1)}`,
        `?origem=site&limit=1&cursor=${cursor}AA`,
        `?limit=1&cursor=${cursor}`,
        `?origem=Site&limit=1&cursor=${cursor}`,
        `?origem=site&since=2000-01-01T00:00:00Z&limit=1&cursor=${cursor}`,
      ]) {
        const res = await list(query);
        expectProblem(res, 400, 'invalid_query');
        expect([query, res.body.errors]).toEqual([query, [expect.objectContaining({ parameter: 'cursor', code: 'invalid_cursor' })]]);
      }
    });
  });

  describe('who may read', () => {
    const paths = () => ['/api/v1/leads', `/api/v1/leads/${sent[0].id}`];

    it('asks for a token with leads:read: 401 authentication_required without one', async () => {
      for (const path of paths()) {
        const res = await get(path, null);
        expectProblem(res, 401, 'authentication_required');
        expect(res.headers['www-authenticate']).toBe(`Bearer scope="leads:read", ${RESOURCE_METADATA}`);
      }
    });

    it('refuses an agent token and an operator token without leads:read: 403 insufficient_scope', async () => {
      const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
      const agent = (await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: registration.body.identity_assertion })).body
        .access_token as string;
      for (const token of [agent, await operatorToken(t, 'leads:write leads:export')]) {
        for (const path of paths()) {
          const res = await get(path, token);
          expectProblem(res, 403, 'insufficient_scope');
          expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="leads:read", ${RESOURCE_METADATA}`);
        }
      }
    });

    it('refuses a bad token 401 invalid_token, before looking at the query', async () => {
      const res = await list('?limit=0', 'not-a-token');
      expectProblem(res, 401, 'invalid_token');
    });
  });

  describe('the audit line', () => {
    let log: jest.SpyInstance;
    beforeEach(() => {
      log = jest.spyOn(Logger.prototype, 'log');
    });
    afterEach(() => log.mockRestore());

    const auditLines = () => log.mock.calls.filter(([line]) => (line as { audit?: unknown })?.audit === 'lead_read');

    it('records each list: client, route, filters without the e-mail, row count and request id', async () => {
      const res = await list(`?email=${encodeURIComponent('ÉLODIE@EXAMPLE.COM')}&since=2026-01-01T00:00:00-03:00&origem=x&limit=10`);
      expect(res.status).toBe(200);
      const lines = auditLines();
      expect(lines).toEqual([
        [
          {
            audit: 'lead_read',
            route: 'GET /api/v1/leads',
            client_id: 'crm-reader',
            request_id: res.headers['x-request-id'],
            filters: { since: '2026-01-01T03:00:00.000Z', until: null, origem: 'x', email_filter: true, screening: 'accepted', channel: null, search: false },
            rows: 0,
          },
          'leads read',
        ],
      ]);
      const plain = await list(`?since=${WINDOW.since}&until=${WINDOW.until}&limit=4`);
      expect(auditLines()[1][0]).toMatchObject({
        filters: {
          since: '2020-01-01T00:00:00.000Z',
          until: '2020-01-02T00:00:00.000Z',
          origem: null,
          email_filter: false,
          screening: 'accepted',
          channel: null,
          search: false,
        },
        rows: 4,
      });
      expect(plain.body.data).toHaveLength(4);
    });

    it('records each lead read by id, and each id that found none', async () => {
      const found = await get(`/api/v1/leads/${sent[0].id}`);
      const missing = await get(`/api/v1/leads/${uuidv7()}`);
      expect(auditLines().map(([line]) => line)).toEqual([
        {
          audit: 'lead_read',
          route: 'GET /api/v1/leads/{id}',
          client_id: 'crm-reader',
          request_id: found.headers['x-request-id'],
          filters: { since: null, until: null, origem: null, email_filter: false },
          rows: 1,
          lead_id: sent[0].id,
        },
        {
          audit: 'lead_read',
          route: 'GET /api/v1/leads/{id}',
          client_id: 'crm-reader',
          request_id: missing.headers['x-request-id'],
          filters: { since: null, until: null, origem: null, email_filter: false },
          rows: 0,
        },
      ]);
    });

    it('never carries personal data: no e-mail, name or telephone, in any case', async () => {
      await list('?email=maria@empresa.com');
      await list('?limit=200');
      await get(`/api/v1/leads/${sent.at(-1)!.id}`);
      expect(auditLines()).toHaveLength(3);
      const logged = JSON.stringify(log.mock.calls).toLowerCase();
      for (const secret of ['maria', 'empresa.com', 'élodie', 'example.com', '98765', 'ana'])
        expect([secret, logged.includes(secret)]).toEqual([secret, false]);
    });
  });
});

describe('reading leads across instances of one database', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    database = await freshDatabase();
    a = await startTestApp({}, database);
    b = await startTestApp({}, database);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database.drop();
  });

  it('takes a cursor from one instance on another: they share the key, made once in the database', async () => {
    for (let i = 0; i < 5; i++) expect((await a.http.post('/api/v1/lead').send({ nome: 'Ana', email: `ana${i}@example.com` })).status).toBe(201);
    const [tokenA, tokenB] = [await operatorToken(a, 'leads:read'), await operatorToken(b, 'leads:read')];
    const all = await b.http.get('/api/v1/leads').set('Authorization', `Bearer ${tokenB}`).then(expectContract);
    const first = await a.http.get('/api/v1/leads?limit=2').set('Authorization', `Bearer ${tokenA}`).then(expectContract);
    const second = await b.http.get(`/api/v1/leads?limit=3&cursor=${first.body.next_cursor}`).set('Authorization', `Bearer ${tokenB}`).then(expectContract);
    expect(second.status).toBe(200);
    expect([...first.body.data, ...second.body.data]).toEqual(all.body.data);
    expect(await database.query('SELECT purpose FROM service_keys')).toEqual([{ purpose: 'lead_cursor' }]);
  });
});

describe('plain dates in since and until: a day in TIME_ZONE', () => {
  /** Leads a millisecond either side of each end of a day, as that zone's clock reads them. */
  const edges = (zone: string, [start, end]: [string, string]) => ({
    before: storedLead(1, { nome: `${zone}: the day before, 23:59:59.999`, receivedAt: new Date(Date.parse(start) - 1) }),
    first: storedLead(2, { nome: `${zone}: 00:00`, receivedAt: new Date(start) }),
    last: storedLead(3, { nome: `${zone}: 23:59:59.999`, receivedAt: new Date(Date.parse(end) - 1) }),
    after: storedLead(4, { nome: `${zone}: the next day, 00:00`, receivedAt: new Date(end) }),
  });

  it.each<[string, Record<string, string>, string, [string, string]]>([
    // Brasília, UTC-03:00 all year: 2026-11-27 is 03:00Z to 03:00Z.
    ['America/Sao_Paulo (the default)', {}, '2026-11-27', ['2026-11-27T03:00:00.000Z', '2026-11-28T03:00:00.000Z']],
    // New York's clocks go forward on 2026-03-08: a day of 23 hours, from -05:00 to -04:00.
    ['America/New_York', { TIME_ZONE: 'America/New_York' }, '2026-03-08', ['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']],
    // São Paulo's summer time began at 00:00 of 2018-11-04: that day began at 01:00 (-02:00).
    ['America/Sao_Paulo in 2018', { TIME_ZONE: 'America/Sao_Paulo' }, '2018-11-04', ['2018-11-04T03:00:00.000Z', '2018-11-05T02:00:00.000Z']],
  ])('in %s, since=D&until=D is the whole day D and nothing else', async (zone, env, day, span) => {
    const t = await startTestApp(env);
    try {
      const leads = edges(zone, span);
      await t.dataSource.getRepository(Lead).insert(Object.values(leads));
      const token = await operatorToken(t, 'leads:read');
      const names = async (query: string) => {
        const res = await t.http.get(`/api/v1/leads?${query}`).set('Authorization', `Bearer ${token}`).then(expectContract);
        expect([query, res.status]).toEqual([query, 200]);
        return res.body.data.map((lead: LeadView) => lead.nome);
      };
      const { before, first, last, after } = leads;
      expect(await names(`since=${day}&until=${day}`)).toEqual([last.nome, first.nome]);
      expect(await names(`since=${day}`)).toEqual([after.nome, last.nome, first.nome]);
      expect(await names(`until=${day}`)).toEqual([last.nome, first.nome, before.nome]);
      // The same instants written as date-times select the same leads.
      expect(await names(`since=${span[0]}&until=${span[1]}`)).toEqual([last.nome, first.nome]);
      // The next page's link carries the instants the dates were read as.
      const page = await t.http.get(`/api/v1/leads?since=${day}&until=${day}&limit=1`).set('Authorization', `Bearer ${token}`).then(expectContract);
      expect(page.headers.link).toBe(
        `<http://leads.test/api/v1/leads?since=${encodeURIComponent(span[0])}&until=${encodeURIComponent(span[1])}&limit=1&cursor=${page.body.next_cursor}>; rel="next"`,
      );
    } finally {
      await t.close();
    }
  });
});

describe('the contract of the read and the export: filters without examples', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** Every member named example, examples or default anywhere in a node, with its path. */
  const prefills = (node: unknown, path: string): string[] =>
    node === null || typeof node !== 'object'
      ? []
      : Object.entries(node).flatMap(([key, value]) => [
          ...(['example', 'examples', 'default'].includes(key) ? [`${path}/${key}`] : []),
          ...prefills(value, `${path}/${key}`),
        ]);

  it("gives Swagger UI's Try it out nothing to fill in for since, until, origem and email: the examples are in the description", async () => {
    const served = (await t.http.get('/docs/openapi-leads.json')).body;
    const resolve = (node: { $ref?: string }) =>
      node.$ref
        ? node.$ref
            .slice(2)
            .split('/')
            .reduce((at: any, token: string) => at[token.replace(/~1/g, '/').replace(/~0/g, '~')], served)
        : node;
    for (const [path, operationId] of [
      ['/api/v1/leads', 'listLeads'],
      ['/api/v1/leads/export', 'exportLeads'],
    ]) {
      const operation = served.paths[path].get;
      expect(operation.operationId).toBe(operationId);
      const filters = operation.parameters.map(resolve).filter((parameter: { name: string }) => ['since', 'until', 'origem', 'email'].includes(parameter.name));
      expect(filters.map((parameter: { name: string }) => parameter.name)).toEqual(['since', 'until', 'origem', 'email']);
      for (const parameter of filters) expect([operationId, prefills(parameter, parameter.name)]).toEqual([operationId, []]);
      expect(operation.description).toContain('since=2026-11-01&until=2026-11-30');
      expect(operation.description).toContain('origem=site-contato');
    }
  });

  it('describes since and until as a date or a date-time', async () => {
    const served = (await t.http.get('/docs/openapi-leads.json')).body;
    for (const name of ['Since', 'Until']) {
      expect(served.components.parameters[name].schema).toEqual({
        anyOf: [
          { type: 'string', format: 'date', pattern: expect.any(String) },
          { type: 'string', format: 'date-time', pattern: expect.any(String) },
        ],
      });
    }
  });
});
