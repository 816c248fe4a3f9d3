/** @database exports streamed from the database */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { parse } from 'csv-parse/sync';
import type { Response } from 'supertest';
import { LeadExportReader } from '../src/leads/lead-export.reader.js';
import { Lead } from '../src/leads/lead.entity.js';
import { storedLead } from './support/stored-leads.js';
import { CSV_COLUMNS } from '../src/leads/lead-export.format.js';
import { PT_BR_HEADERS } from '../src/leads/lead-export.headers.js';
import { type LeadView } from '../src/leads/lead-reader.service.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * GET /api/v1/leads/export (docs/decisions/0024-streamed-export.md) over rows stored directly (formulas, line breaks,
 * quotes, equal timestamps across pages of EXPORT_PAGE_SIZE=7), compared with what GET /api/v1/leads shows of the same
 * leads: CSV parsed back with csv-parse, the ; profile, JSON Lines; the query rules; who may export; the cap on
 * concurrent exports; a client that goes away; a failure before and after the first byte; the audit line.
 */

const BASE = 'http://leads.test';
const PAGE_SIZE = 7;
const CSV_TYPE = 'text/csv; charset=utf-8; header=present';
const RESOURCE_METADATA = `resource_metadata="${BASE}/.well-known/oauth-protected-resource"`;

/** A CSV or JSON Lines body as text (superagent buffers only the types it knows), a problem as its JSON. */
const text = (response: Response, done: (error: Error | null, body: unknown) => void) => {
  // In Node, superagent hands a parser the response stream itself.
  const res = response as unknown as IncomingMessage;
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (body += chunk));
  res.on('end', () => done(null, String(res.headers['content-type']).startsWith('application/problem+json') ? JSON.parse(body) : body));
};

/** The cells a spreadsheet would run as formulas, as the export must write them; plain numbers (-3.5, +55…, -42) stay. */
const FORMULAS: Record<string, string> = {
  "=cmd|' /C calc'!A0": "'=cmd|' /C calc'!A0",
  '+55 (11) 98765-4321': "'+55 (11) 98765-4321",
  '+1+1': "'+1+1",
  '-2+3': "'-2+3",
  '@SUM(A1:A9)': "'@SUM(A1:A9)",
  '\t=1+1': "'\t=1+1",
  '\r=1+1': "'\r=1+1",
  '\uff1d1+1': "'\uff1d1+1",
};

describe('exporting leads: GET /api/v1/leads/export', () => {
  let t: TestApp;
  let exporter: string;
  let reader: string;
  /** Every stored lead as GET /api/v1/leads shows it, newest first. */
  let all: LeadView[];
  let base: string;

  const exportLeads = (query = '', token: string | null = exporter) => {
    const req = t.http.get(`/api/v1/leads/export${query}`).buffer(true).parse(text);
    return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).then(expectContract);
  };

  /** GET /api/v1/leads with every page followed: what the export must contain for the same filters. */
  async function listed(query = ''): Promise<LeadView[]> {
    const seen: LeadView[] = [];
    let cursor = '';
    do {
      const res = await t.http.get(`/api/v1/leads?limit=200${query}${cursor}`).set('Authorization', `Bearer ${reader}`).then(expectContract);
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor ? `&cursor=${res.body.next_cursor}` : '';
    } while (cursor);
    return seen;
  }

  /** A CSV record as the export must write a lead: nulls empty, formula cells neutralised (see the cases below). */
  const csvRecord = (lead: LeadView) =>
    Object.fromEntries(
      CSV_COLUMNS.map((column) => {
        const value = (lead as unknown as Record<string, unknown>)[column] ?? screeningCells(lead)[column];
        return [column, typeof value === 'string' ? (FORMULAS[value] ?? value) : ''];
      }),
    );
  /** The screening columns of a lead: its verdict, its reasons space-separated, who decided and when. */
  const screeningCells = (lead: LeadView): Record<string, string> => ({
    screening_verdict: lead.screening.verdict,
    screening_reasons: lead.screening.reasons.join(' '),
    screening_decided_by: lead.screening.decided_by,
    screening_decided_at: lead.screening.decided_at,
  });

  function expectProblem(res: Response, status: number, code: string): void {
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ status, type: `${BASE}/docs/errors#${code}`, instance: '/api/v1/leads/export', request_id: res.headers['x-request-id'] });
  }

  /** An export over a real socket, read `chunks` chunks at a time by the caller (see disconnect and failure tests). */
  function openExport(query = ''): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}/api/v1/leads/export${query}`, { headers: { Authorization: `Bearer ${exporter}` } }, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  /** Makes each page of the export take `ms` longer, and counts the pages read. */
  function slowPages(ms: number): { pages: () => number } {
    const page = LeadExportReader.prototype.page;
    let count = 0;
    jest.spyOn(LeadExportReader.prototype, 'page').mockImplementation(async function (this: LeadExportReader, ...args) {
      count++;
      await sleep(ms);
      return page.apply(this, args);
    });
    return { pages: () => count };
  }

  beforeAll(async () => {
    t = await startTestApp({ EXPORT_PAGE_SIZE: String(PAGE_SIZE), EXPORT_MAX_CONCURRENT: '1' });
    exporter = await operatorToken(t, 'leads:export', 'crm-export');
    reader = await operatorToken(t, 'leads:read', 'crm-reader');
    const rows: Lead[] = [];
    const lead = (at: string, fields: Partial<Lead> = {}): Lead =>
      storedLead(rows.length, { nome: 'Ana', email: `lead-${rows.length}@example.com`, receivedAt: new Date(at), ...fields });
    // 30 with one timestamp (ids break the tie across pages of 7), then one lead per tricky value.
    for (let i = 0; i < 30; i++) rows.push(lead('2026-01-01T10:00:00.000Z', { origem: i % 3 ? 'site' : 'feira', channel: i % 2 ? 'form' : 'cli' }));
    rows.push(
      lead('2026-01-02T10:00:00.000Z', { nome: "=cmd|' /C calc'!A0", telefone: '+55 (11) 98765-4321', telefoneE164: '+5511987654321' }),
      lead('2026-01-02T10:00:00.001Z', { nome: '+1+1', empresa: '-3.5', mensagem: '-2+3' }),
      lead('2026-01-02T10:00:00.002Z', { nome: '@SUM(A1:A9)', empresa: '\t=1+1', mensagem: '\r=1+1' }),
      lead('2026-01-02T10:00:00.003Z', { nome: '\uff1d1+1', empresa: '+5511987654321', origem: '-42' }),
      lead('2026-01-03T10:00:00.000Z', { mensagem: 'linha 1\nlinha 2', empresa: 'Souza, Filhos; Cia', nome: 'Diz "olá"' }),
      lead('2026-01-03T10:00:00.001Z', { mensagem: 'linha 1\r\nlinha 2\r\n', empresa: '"aspas"', registrationId: 'reg_x', clientId: 'crm-writer' }),
      lead('2026-01-04T10:00:00.000Z', { email: 'ÉLODIE@Example.com', origem: 'site', channel: 'mcp' }),
    );
    await t.dataSource.getRepository(Lead).insert(rows);
    all = await listed();
    expect(all).toHaveLength(rows.length);
    const server = await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  describe('CSV', () => {
    it('is every stored lead as the list shows it, newest first, a header row, CRLF line ends, as a dated download', async () => {
      const res = await exportLeads();
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(CSV_TYPE);
      expect(res.headers['content-disposition']).toBe(`attachment; filename="leads-${new Date().toISOString().slice(0, 10)}.csv"`);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['transfer-encoding']).toBe('chunked');
      const body = res.body as string;
      expect(body.startsWith(`${CSV_COLUMNS.join(',')}\r\n`)).toBe(true);
      expect(body.endsWith('\r\n')).toBe(true);
      // Every line break outside a quoted field is CRLF: a bare LF or CR appears only inside the two quoted mensagens.
      expect(body.replace(/"(?:[^"]|"")*"/g, '').replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
      expect(parse(body, { columns: true })).toEqual(all.map(csvRecord));
    });

    it('neutralises cells a spreadsheet would run as formulas, and keeps plain numbers', async () => {
      const records = parse((await exportLeads()).body, { columns: true }) as Record<string, string>[];
      const cells = (nome: string) => records.find((record) => record.nome === nome)!;
      expect(cells("'=cmd|' /C calc'!A0")).toMatchObject({ telefone: "'+55 (11) 98765-4321", telefone_e164: '+5511987654321' });
      expect(cells("'+1+1")).toMatchObject({ empresa: '-3.5', mensagem: "'-2+3" });
      expect(cells("'@SUM(A1:A9)")).toMatchObject({ empresa: "'\t=1+1", mensagem: "'\r=1+1" });
      expect(cells("'\uff1d1+1")).toMatchObject({ empresa: '+5511987654321', origem: '-42' });
    });

    it('quotes fields with line breaks, quotes and the delimiter, which parse back as stored', async () => {
      const body = (await exportLeads()).body as string;
      expect(body).toContain(',"Diz ""olá""",');
      expect(body).toContain('"Souza, Filhos; Cia","linha 1\nlinha 2"');
      expect(body).toContain('"""aspas""","linha 1\r\nlinha 2\r\n"');
      const records = parse(body, { columns: true }) as Record<string, string>[];
      expect(records.map((record) => record.mensagem)).toEqual(expect.arrayContaining(['linha 1\nlinha 2', 'linha 1\r\nlinha 2\r\n']));
    });

    it('gives delimiter=;&columns=all the pt-BR spreadsheet profile of every column: BOM, semicolons, Portuguese headers, Brasília time', async () => {
      const res = await exportLeads('?delimiter=%3B&columns=all');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(CSV_TYPE);
      const body = res.body as string;
      expect(body.startsWith(`\ufeffID;Recebido em;Nome;E-mail;Telefone;Telefone (E.164);Empresa;Mensagem;Origem;Canal;`)).toBe(true);
      expect(body).toContain(';"Souza, Filhos; Cia";');
      const [header, ...records] = parse(body, { delimiter: ';', bom: true }) as string[][];
      expect(header).toEqual(CSV_COLUMNS.map((column) => PT_BR_HEADERS[column]));
      // São Paulo is at -03:00 all year since 2019.
      const brasilia = (iso: string) =>
        new Date(Date.parse(iso) - 3 * 3_600_000).toISOString().replace(/^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d).*$/, '$3/$2/$1 $4');
      expect(records).toEqual(
        all.map((lead) =>
          Object.values({ ...csvRecord(lead), received_at: brasilia(lead.received_at), screening_decided_at: brasilia(lead.screening.decided_at) }),
        ),
      );
      // A literal ; in the query string is the same parameter value.
      expect((await exportLeads('?delimiter=;&columns=all')).body).toBe(body);
    });

    it('keeps delimiter=, (and columns=all with it) in the technical form, byte for byte', async () => {
      const body = (await exportLeads()).body as string;
      expect((await exportLeads('?delimiter=,')).body).toBe(body);
      expect((await exportLeads('?delimiter=,&columns=all')).body).toBe(body);
      expect((await exportLeads('?columns=all')).body).toBe(body);
    });
  });

  it('answers HEAD with the headers of the download and reads no lead', async () => {
    const { pages } = slowPages(0);
    const res = await t.http.head('/api/v1/leads/export?format=jsonl').set('Authorization', `Bearer ${exporter}`).then(expectContract);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/jsonl');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="leads-${new Date().toISOString().slice(0, 10)}.jsonl"`);
    expect(pages()).toBe(0);
  });

  it('lets a page of another origin read the file name (CORS)', async () => {
    const res = await t.http.get('/api/v1/leads/export?origem=nenhuma').set('Authorization', `Bearer ${exporter}`).set('Origin', 'https://crm.example');
    expect(res.headers['access-control-expose-headers']).toContain('Content-Disposition');
  });

  describe('JSON Lines', () => {
    it('is one lead a line exactly as the list shows it, nothing neutralised', async () => {
      const res = await exportLeads('?format=jsonl');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/jsonl');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="leads-${new Date().toISOString().slice(0, 10)}.jsonl"`);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toBe(all.map((lead) => `${JSON.stringify(lead)}\n`).join(''));
      expect(res.body).toContain('"nome":"=cmd|\' /C calc\'!A0"');
    });
  });

  describe('filters and pages', () => {
    it.each([
      '&origem=site',
      '&origem=-42',
      `&email=${encodeURIComponent('élodie@EXAMPLE.com')}`,
      '&since=2026-01-02T10:00:00.001Z&until=2026-01-03T10:00:00.001Z',
      '&since=2026-01-01T07:00:00-03:00&until=2026-01-01T10:00:00.001Z',
      '&until=2026-01-01T10:00:00.000Z',
    ])('selects what the list selects with %s', async (query) => {
      const expected = await listed(query);
      const res = await exportLeads(`?format=jsonl${query}`);
      expect(res.status).toBe(200);
      expect(res.body).toBe(expected.map((lead) => `${JSON.stringify(lead)}\n`).join(''));
    });

    it('reads pages of EXPORT_PAGE_SIZE, each after the last lead of the one before, across equal timestamps', async () => {
      const { pages } = slowPages(0);
      const res = await exportLeads('?format=jsonl&origem=site');
      const leads = (res.body as string).split('\n').slice(0, -1);
      expect(leads.length).toBeGreaterThan(2 * PAGE_SIZE);
      expect(new Set(leads).size).toBe(leads.length);
      // The pages it needed, and one more that came back short (or empty) and ended the export.
      expect(pages()).toBe(Math.floor(leads.length / PAGE_SIZE) + 1);
    });

    it('exports nothing but the header when nothing matches', async () => {
      expect((await exportLeads('?origem=nenhuma')).body).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
      expect((await exportLeads('?origem=nenhuma&format=jsonl')).body).toBe('');
    });
  });

  describe('bad queries', () => {
    it.each([
      ['?format=xlsx', 'format', 'invalid_format', 'format must be csv or jsonl.'],
      ['?format=CSV', 'format', 'invalid_format', 'format must be csv or jsonl.'],
      ['?delimiter=%7C', 'delimiter', 'invalid_format', expect.stringContaining('delimiter must be , (the default) or ;')],
      ['?format=jsonl&delimiter=%3B', 'delimiter', 'invalid_format', 'delimiter applies to format=csv only; leave it out for jsonl.'],
      ['?format=jsonl&columns=nome', 'columns', 'invalid_format', 'columns applies to format=csv only; leave it out for jsonl.'],
      [
        '?columns=nome,e-mail',
        'columns',
        'invalid_format',
        expect.stringMatching(/^columns must be all, or a comma list of column names \(id, received_at, .*; unknown: "e-mail"\.$/),
      ],
      ['?delimiter=%3B&columns=Nome', 'columns', 'invalid_format', expect.stringContaining('unknown: "Nome"')],
      ['?columns=all,nome', 'columns', 'invalid_format', expect.stringContaining('unknown: "all"')],
      ['?columns=nome,', 'columns', 'invalid_format', expect.stringContaining('unknown: ""')],
      ['?columns=nome,email,nome', 'columns', 'invalid_format', expect.stringContaining('named twice: nome')],
      ['?columns=', 'columns', 'too_short', expect.stringContaining('columns must be all, or a comma list')],
      ['?columns=nome&columns=email', 'columns', 'repeated_parameter', 'columns is given more than once; give it once.'],
      ['?since=27/11/2026', 'since', 'invalid_format', expect.stringContaining('since must be a date such as 2026-11-27')],
      ['?format=csv&format=jsonl', 'format', 'repeated_parameter', 'format is given more than once; give it once.'],
      ['?limit=10', 'limit', 'unknown_parameter', 'limit is not a parameter of this operation.'],
      ['?cursor=abc', 'cursor', 'unknown_parameter', 'cursor is not a parameter of this operation.'],
      ['?since=yesterday', 'since', 'invalid_format', expect.stringContaining('or an RFC 3339 date-time with a time zone')],
      ['?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until', 'out_of_range', expect.stringContaining('until must not be before since')],
      ['?origem=', 'origem', 'too_short', expect.any(String)],
    ])('answers %s with 400 invalid_query naming %s', async (query, parameter, code, detail) => {
      const { pages } = slowPages(0);
      const res = await exportLeads(query);
      expectProblem(res, 400, 'invalid_query');
      expect(res.body.errors).toEqual([{ parameter, code, detail }]);
      expect(pages()).toBe(0);
    });
  });

  it('answers a columns value longer than every column named once with 400 invalid_query, too_long', async () => {
    const res = await exportLeads(`?columns=${'nome,'.repeat(200)}nome`);
    expectProblem(res, 400, 'invalid_query');
    expect(res.body.errors).toEqual([{ parameter: 'columns', code: 'too_long', detail: expect.stringContaining('columns must be all, or a comma list') }]);
  });

  it('answers another method 405 with Allow', async () => {
    const res = await t.http.post('/api/v1/leads/export').set('Authorization', `Bearer ${exporter}`).then(expectContract);
    expect([res.status, res.body.code, res.headers.allow]).toEqual([405, 'method_not_allowed', 'GET, HEAD']);
  });

  describe('who may export', () => {
    it('asks for a token with leads:export: 401 authentication_required without one', async () => {
      const res = await exportLeads('', null);
      expectProblem(res, 401, 'authentication_required');
      expect(res.headers['www-authenticate']).toBe(`Bearer scope="leads:export", ${RESOURCE_METADATA}`);
    });

    it('refuses a leads:read token and an agent token: 403 insufficient_scope', async () => {
      const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
      const agent = (
        await t.http
          .post('/oauth2/token')
          .type('form')
          .send({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: registration.body.identity_assertion })
      ).body.access_token as string;
      for (const token of [reader, agent, await operatorToken(t, 'leads:read leads:write')]) {
        const res = await exportLeads('', token);
        expectProblem(res, 403, 'insufficient_scope');
        expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="leads:export", ${RESOURCE_METADATA}`);
      }
    });
  });

  describe('streaming', () => {
    it('runs EXPORT_MAX_CONCURRENT exports at once: one more is 503 export_busy with Retry-After, and the slot frees when it ends', async () => {
      slowPages(40);
      const running = await openExport();
      expect(running.statusCode).toBe(200);
      const busy = await exportLeads('?format=jsonl');
      expectProblem(busy, 503, 'export_busy');
      expect(busy.headers['retry-after']).toBe('10');
      expect(busy.body.detail).toBe('This instance is streaming as many exports as it runs at once (1); retry later.');
      await new Promise((done) => running.resume().on('end', done));
      jest.restoreAllMocks();
      expect((await exportLeads('?format=jsonl')).status).toBe(200);
    });

    it('stops reading pages as soon as the client goes away, and frees its slot', async () => {
      const { pages } = slowPages(30);
      const res = await openExport();
      expect(res.statusCode).toBe(200);
      await new Promise((done) => res.once('data', done));
      res.destroy();
      await sleep(200);
      const seen = pages();
      await sleep(300);
      // At most the page being read when the socket closed; the export would have needed 6.
      expect(pages()).toBe(seen);
      expect(seen).toBeLessThan(Math.ceil(all.length / PAGE_SIZE));
      jest.restoreAllMocks();
      expect((await exportLeads('?format=jsonl')).status).toBe(200);
    });

    it('answers a database failure before the first byte with a problem', async () => {
      jest.spyOn(LeadExportReader.prototype, 'page').mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      const res = await exportLeads();
      expectProblem(res, 503, 'service_unavailable');
      expect(res.headers['retry-after']).toBe('5');
      jest.restoreAllMocks();
      expect((await exportLeads()).status).toBe(200);
    });

    it('closes the connection on a failure after the first byte, so that the file cannot pass for whole', async () => {
      const page = LeadExportReader.prototype.page;
      let calls = 0;
      jest.spyOn(LeadExportReader.prototype, 'page').mockImplementation(async function (this: LeadExportReader, ...args) {
        if (++calls === 3) throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
        return page.apply(this, args);
      });
      const res = await openExport('?format=jsonl');
      expect(res.statusCode).toBe(200);
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      const ending = await new Promise<string>((done) => {
        res.on('end', () => done('end'));
        res.on('aborted', () => done('aborted'));
        res.on('error', () => done('error'));
      });
      expect(ending).not.toBe('end');
      expect(res.complete).toBe(false);
      // Whole leads of the first two pages at most, and no problem document after them.
      const whole = all
        .slice(0, 2 * PAGE_SIZE)
        .map((lead) => `${JSON.stringify(lead)}\n`)
        .join('');
      expect(body.length).toBeGreaterThan(0);
      expect(whole.startsWith(body)).toBe(true);
      jest.restoreAllMocks();
      expect((await exportLeads()).status).toBe(200);
    });
  });

  describe('the audit line', () => {
    const auditLines = (log: jest.SpyInstance) =>
      log.mock.calls.filter(([line]) => (line as { route?: unknown })?.route === 'GET /api/v1/leads/export').map(([line]) => line);

    it('records each export once: client, filters without the e-mail, rows, format and whether it completed', async () => {
      const log = jest.spyOn(Logger.prototype, 'log');
      const res = await exportLeads(`?delimiter=%3B&email=${encodeURIComponent('élodie@example.com')}&since=2026-01-01T00:00:00-03:00`);
      expect(res.status).toBe(200);
      await sleep(50);
      expect(auditLines(log)).toEqual([
        {
          audit: 'lead_read',
          route: 'GET /api/v1/leads/export',
          client_id: 'crm-export',
          request_id: res.headers['x-request-id'],
          filters: { since: '2026-01-01T03:00:00.000Z', until: null, origem: null, email_filter: true, screening: 'accepted', channel: null, search: false },
          rows: 1,
          format: 'csv',
          delimiter: ';',
          outcome: 'completed',
          duration_ms: expect.any(Number),
        },
      ]);
      expect(JSON.stringify(log.mock.calls).toLowerCase()).not.toContain('lodie');
    });

    it('says when the client went away', async () => {
      const log = jest.spyOn(Logger.prototype, 'log');
      slowPages(30);
      const res = await openExport('?format=jsonl');
      await new Promise((done) => res.once('data', done));
      res.destroy();
      await sleep(300);
      const [line] = auditLines(log);
      expect(line).toMatchObject({ format: 'jsonl', delimiter: null, outcome: 'client_gone' });
      expect(line.rows).toBeLessThan(all.length);
    });
  });
});

describe('the pt-BR export profile and columns, in TIME_ZONE', () => {
  let saoPaulo: TestApp;
  let lisbon: TestApp;
  const tokens = new Map<TestApp, string>();

  const exportOf = async (t: TestApp, query: string) => {
    const res = await t.http
      .get(`/api/v1/leads/export${query}`)
      .set('Authorization', `Bearer ${tokens.get(t)}`)
      .buffer(true)
      .parse(text)
      .then(expectContract);
    expect([query, res.status]).toEqual([query, 200]);
    return res.body as string;
  };

  beforeAll(async () => {
    [saoPaulo, lisbon] = await Promise.all([startTestApp(), startTestApp({ TIME_ZONE: 'Europe/Lisbon' })]);
    for (const t of [saoPaulo, lisbon]) {
      // 23:59:59 of 14 July in Brasília (-03:00), 03:59:59 of the 15th in Lisbon (summer, +01:00).
      const late = storedLead(1, {
        nome: 'Ana Lima',
        email: 'ana@example.com',
        telefone: '+55 (11) 98765-4321',
        telefoneE164: '+5511987654321',
        empresa: 'Souza; Filhos',
        mensagem: 'linha 1\nlinha 2',
        origem: 'site',
        receivedAt: new Date('2026-07-15T02:59:59.250Z'),
        context: { utm_source: 'google' },
        legalBases: [
          {
            category: 'communications',
            type: 'consent',
            status: 'granted',
            recorded_at: '2026-07-15T02:59:59.250Z',
            channel: 'form',
            consent_text_sha256: 'a'.repeat(64),
            // Winter in Lisbon (+00:00).
            revoked_at: '2026-12-01T12:00:00.000Z',
          },
        ],
      });
      // 00:00 of 15 July in Brasília.
      const midnight = storedLead(2, { nome: 'Carla', email: 'carla@example.com', receivedAt: new Date('2026-07-15T03:00:00.000Z') });
      const winter = storedLead(3, { nome: '=1+1', email: 'bia@example.com', receivedAt: new Date('2026-01-10T12:00:00.000Z') });
      await t.dataSource.getRepository(Lead).insert([late, midnight, winter]);
      tokens.set(t, await operatorToken(t, 'leads:export'));
    }
  });
  afterAll(async () => {
    await saoPaulo?.close();
    await lisbon?.close();
  });

  it('writes delimiter=; with a BOM, semicolons, Portuguese headers, the seven default columns and date-times in Brasília', async () => {
    expect(await exportOf(saoPaulo, '?delimiter=%3B')).toBe(
      '\ufeffRecebido em;Nome;E-mail;Telefone;Empresa;Mensagem;Origem\r\n' +
        '15/07/2026 00:00:00;Carla;carla@example.com;;;;\r\n' +
        `14/07/2026 23:59:59;Ana Lima;ana@example.com;'+55 (11) 98765-4321;"Souza; Filhos";"linha 1\nlinha 2";site\r\n` +
        "10/01/2026 09:00:00;'=1+1;bia@example.com;;;;\r\n",
    );
  });

  it('writes the date-times on the clock of another TIME_ZONE, the legal bases’ too, in the columns asked for', async () => {
    const columns = 'received_at,nome,communications_recorded_at,communications_revoked_at,utm_source';
    expect(await exportOf(lisbon, `?delimiter=%3B&columns=${columns}`)).toBe(
      '\ufeffRecebido em;Nome;Comunicações: registrado em;Comunicações: revogado em;utm_source\r\n' +
        '15/07/2026 04:00:00;Carla;;;\r\n' +
        '15/07/2026 03:59:59;Ana Lima;15/07/2026 03:59:59;01/12/2026 12:00:00;google\r\n' +
        "10/01/2026 12:00:00;'=1+1;;;\r\n",
    );
    expect(await exportOf(saoPaulo, `?delimiter=%3B&columns=${columns}`)).toContain(
      '14/07/2026 23:59:59;Ana Lima;14/07/2026 23:59:59;01/12/2026 09:00:00;google\r\n',
    );
  });

  it('gives delimiter=, the columns asked for, in their order, in the technical form (spaces around names ignored)', async () => {
    expect(await exportOf(saoPaulo, '?columns=email,%20received_at%20,utm_source,communications_revoked_at')).toBe(
      'email,received_at,utm_source,communications_revoked_at\r\n' +
        'carla@example.com,2026-07-15T03:00:00.000Z,,\r\n' +
        'ana@example.com,2026-07-15T02:59:59.250Z,google,2026-12-01T12:00:00.000Z\r\n' +
        'bia@example.com,2026-01-10T12:00:00.000Z,,\r\n',
    );
  });

  it('takes plain dates as days of TIME_ZONE: a lead at 23:59:59 is in its day, one at 00:00 of the next is not', async () => {
    const names = async (t: TestApp, query: string) =>
      (parse(await exportOf(t, `?delimiter=%3B&columns=nome${query}`), { delimiter: ';', bom: true }) as string[][]).slice(1).map(([nome]) => nome);
    expect(await names(saoPaulo, '&since=2026-07-14&until=2026-07-14')).toEqual(['Ana Lima']);
    expect(await names(saoPaulo, '&since=2026-07-15')).toEqual(['Carla']);
    expect(await names(saoPaulo, '&until=2026-07-14')).toEqual(['Ana Lima', "'=1+1"]);
    expect(await names(lisbon, '&since=2026-07-15&until=2026-07-15')).toEqual(['Carla', 'Ana Lima']);
    expect(await names(lisbon, '&until=2026-07-14')).toEqual(["'=1+1"]);
  });
});
