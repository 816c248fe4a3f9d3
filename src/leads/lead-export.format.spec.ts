import { parse } from 'csv-parse/sync';
import { CONTRACT } from '../../test/support/contract.js';
import { CSV_COLUMNS, csvWriter, jsonLinesWriter } from './lead-export.format.js';
import { PT_BR_HEADERS } from './lead-export.headers.js';
import { exportRequestOf, LeadExportQuery } from './lead-export.query.js';
import type { LeadRecord } from './lead-export.reader.js';
import { LEAD_VIEW_COLUMNS, LeadView } from './lead-reader.service.js';

const SAO_PAULO = 'America/Sao_Paulo';

const view = (over: Partial<LeadView>): LeadView => ({
  id: '0193a3c2-7b8e-7c1e-9f00-000000000001',
  received_at: '2026-11-25T10:00:00.000Z',
  nome: 'Maria Souza',
  email: 'maria@example.com',
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
  screening: { verdict: 'accepted', reasons: [], decided_by: 'screening', decided_at: '2026-11-25T10:00:00.000Z' },
  ...over,
});
/** A lead as the export reader gives it: the JSON columns as text, null when empty (as stored). */
const recordOf = (lead: LeadView): LeadRecord => [
  ...LEAD_VIEW_COLUMNS.map((column) => {
    if (column === 'legal_bases') return lead.legal_bases.length ? JSON.stringify(lead.legal_bases) : null;
    if (column === 'context') return Object.keys(lead.context).length ? JSON.stringify(lead.context) : null;
    return lead[column];
  }),
  lead.screening.verdict,
  JSON.stringify(lead.screening.reasons),
  lead.screening.decided_by,
  lead.screening.decided_at,
];
const row = (over: Partial<LeadView>): LeadRecord => recordOf(view(over));
/** The member a Portuguese header names. */
const memberOf = (header: string) => Object.entries(PT_BR_HEADERS).find(([, name]) => name === header)![0];
/** The plain members of a view, as csv-parse reads them back. */
const plain = (lead: LeadView) => Object.fromEntries(Object.entries(lead).filter(([key]) => key !== 'legal_bases' && key !== 'context' && key !== 'screening'));
/** The empty cells of a lead with no context and no legal bases, and its screening cells. */
const NO_EXTRAS = ','.repeat(CSV_COLUMNS.length - LEAD_VIEW_COLUMNS.length - 4 + 2) + ',accepted,,screening,2026-11-25T10:00:00.000Z';

describe('csvWriter', () => {
  it('writes the header row and CRLF records, quoting only what needs it', () => {
    const csv = csvWriter(',', CSV_COLUMNS, SAO_PAULO);
    const text = csv.head() + csv.rows([row({ empresa: 'Souza, Filhos & Cia', mensagem: 'diz "olá"' })]);
    expect(text).toBe(
      `${CSV_COLUMNS.join(',')}\r\n` +
        `0193a3c2-7b8e-7c1e-9f00-000000000001,2026-11-25T10:00:00.000Z,Maria Souza,maria@example.com,,,"Souza, Filhos & Cia","diz ""olá""",,api,,${NO_EXTRAS}\r\n`,
    );
  });

  it.each(['linha 1\nlinha 2', 'linha 1\r\nlinha 2', 'linha 1\rlinha 2'])('quotes a field with a line break (%j), which parses back', (mensagem) => {
    const csv = csvWriter(',', CSV_COLUMNS, SAO_PAULO);
    const text = csv.head() + csv.rows([row({ mensagem })]);
    expect(text).toContain(`"${mensagem}"`);
    expect((parse(text, { columns: true }) as Record<string, string>[])[0].mensagem).toBe(mensagem);
  });

  it('gives the ; profile a BOM, semicolons, Portuguese headers, and quotes a semicolon but not a comma', () => {
    const csv = csvWriter(';', CSV_COLUMNS, 'UTC');
    const text = csv.head() + csv.rows([row({ empresa: 'A; B', mensagem: 'a, b' })]);
    expect(text.startsWith(`\ufeffID;Recebido em;Nome;E-mail;Telefone;Telefone (E.164);Empresa;Mensagem;Origem;Canal;`)).toBe(true);
    expect(text).toContain(';"A; B";a, b;');
    const [parsed] = parse(text, { delimiter: ';', bom: true, columns: (header: string[]) => header.map(memberOf) }) as Record<string, string>[];
    expect(parsed).toMatchObject({ ...plain(view({ empresa: 'A; B', mensagem: 'a, b', received_at: '25/11/2026 10:00:00' })), ...NULLS_AS_EMPTY });
  });

  it('names every column in Portuguese, each differently', () => {
    const headers = CSV_COLUMNS.map((column) => PT_BR_HEADERS[column]);
    expect(headers.every((header) => typeof header === 'string' && header.length > 0)).toBe(true);
    expect(new Set(headers).size).toBe(CSV_COLUMNS.length);
  });

  it.each([
    // Brasília: -03:00 all year since 2019; the day changes three hours after UTC's.
    [SAO_PAULO, '2026-11-25T02:59:59.999Z', '24/11/2026 23:59:59'],
    [SAO_PAULO, '2026-11-25T03:00:00.000Z', '25/11/2026 00:00:00'],
    // Before 2019 it had summer time (-02:00), which began at 00:00: 2018-11-04 had no 00:00 hour.
    [SAO_PAULO, '2018-11-04T02:59:59.000Z', '03/11/2018 23:59:59'],
    [SAO_PAULO, '2018-11-04T03:00:00.000Z', '04/11/2018 01:00:00'],
    // Lisbon: +00:00 in winter, +01:00 in summer, changing at 01:00 UTC.
    ['Europe/Lisbon', '2026-03-29T00:59:59.000Z', '29/03/2026 00:59:59'],
    ['Europe/Lisbon', '2026-03-29T01:00:00.000Z', '29/03/2026 02:00:00'],
    ['Europe/Lisbon', '2026-10-25T00:30:00.000Z', '25/10/2026 01:30:00'],
    ['Europe/Lisbon', '2026-10-25T01:30:00.000Z', '25/10/2026 01:30:00'],
    // Half-hour zones change within an hour of UTC: Adelaide (+10:30 → +09:30 at 16:30 UTC).
    ['Australia/Adelaide', '2026-04-04T16:29:59.000Z', '05/04/2026 02:59:59'],
    ['Australia/Adelaide', '2026-04-04T16:30:00.000Z', '05/04/2026 02:00:00'],
    ['UTC', '0001-01-01T00:00:00.000Z', '01/01/0001 00:00:00'],
  ])('writes the ; profile date-times dd/mm/aaaa hh:mm:ss on the clock of %s: %s is %s', (timeZone, instant, local) => {
    const csv = csvWriter(';', ['received_at', 'communications_recorded_at'], timeZone);
    const basis = {
      category: 'communications',
      type: 'consent',
      status: 'granted',
      recorded_at: instant,
      channel: 'api',
      consent_text_sha256: null,
      revoked_at: null,
    };
    expect(csv.rows([row({ received_at: instant, legal_bases: [basis] as LeadView['legal_bases'] })])).toBe(`${local};${local}\r\n`);
  });

  it('writes each context member and each legal basis category in columns of their own, neutralised too', () => {
    const csv = csvWriter(',', CSV_COLUMNS, SAO_PAULO);
    const lead = view({
      context: { page_url: 'https://exemplo.com.br/contato', utm_source: '=HYPERLINK("x")' },
      legal_bases: [
        {
          category: 'data_processing',
          type: 'legitimate_interest',
          status: 'granted',
          recorded_at: '2026-11-25T10:00:00.000Z',
          channel: 'form',
          consent_text_sha256: null,
          revoked_at: null,
        },
        {
          category: 'communications',
          type: 'consent',
          status: 'declined',
          recorded_at: '2026-11-25T10:00:00.000Z',
          channel: 'form',
          consent_text_sha256: 'a'.repeat(64),
          revoked_at: '2026-11-26T10:00:00.000Z',
        },
      ],
    });
    const [parsed] = parse(csv.head() + csv.rows([recordOf(lead)]), { columns: true }) as Record<string, string>[];
    expect(parsed).toMatchObject({
      page_url: 'https://exemplo.com.br/contato',
      utm_source: `'=HYPERLINK("x")`,
      utm_medium: '',
      communications_type: 'consent',
      communications_status: 'declined',
      communications_recorded_at: '2026-11-25T10:00:00.000Z',
      communications_revoked_at: '2026-11-26T10:00:00.000Z',
      data_processing_type: 'legitimate_interest',
      data_processing_status: 'granted',
      data_processing_revoked_at: '',
      consent_text_sha256: 'a'.repeat(64),
    });
  });

  it('writes the screening: the verdict, the reasons space-separated, who decided and when (on the team clock with ;)', () => {
    const lead = view({
      screening: { verdict: 'held', reasons: ['disposable_email', 'too_fast'], decided_by: 'op_x', decided_at: '2026-11-25T12:30:00.000Z' },
    });
    const columns = ['screening_verdict', 'screening_reasons', 'screening_decided_by', 'screening_decided_at'] as const;
    expect(csvWriter(',', columns, SAO_PAULO).rows([recordOf(lead)])).toBe('held,disposable_email too_fast,op_x,2026-11-25T12:30:00.000Z\r\n');
    const ptBr = csvWriter(';', columns, SAO_PAULO);
    expect(ptBr.head() + ptBr.rows([recordOf(lead)])).toBe(
      '\ufeffTriagem: veredito;Triagem: motivos;Triagem: decidido por;Triagem: decidido em\r\nheld;disposable_email too_fast;op_x;25/11/2026 09:30:00\r\n',
    );
    expect(JSON.parse(jsonLinesWriter().rows([recordOf(lead)])).screening).toEqual(lead.screening);
  });

  it('neutralises formula cells and keeps plain numbers', () => {
    const csv = csvWriter(',', CSV_COLUMNS, SAO_PAULO);
    const text = csv.rows([row({ nome: '=cmd', empresa: '@SUM(A1)', telefone: '+55 (11) 98765-4321', telefone_e164: '+5511987654321', mensagem: '-3.5' })]);
    const [cells] = parse(text) as string[][];
    expect(cells.slice(2, 8)).toEqual(["'=cmd", 'maria@example.com', "'+55 (11) 98765-4321", '+5511987654321', "'@SUM(A1)", '-3.5']);
  });
});

const NULLS_AS_EMPTY = { telefone: '', telefone_e164: '', origem: '', registration_id: '', client_id: '' };

describe('jsonLinesWriter', () => {
  it('writes one LeadView a line, members in their order, without neutralising', () => {
    const jsonl = jsonLinesWriter();
    const leads = [view({ nome: '=cmd' }), view({ id: 'b', mensagem: 'a\nb' })];
    const text = jsonl.head() + jsonl.rows(leads.map(recordOf));
    expect(text.split('\n')).toEqual([JSON.stringify(leads[0]), JSON.stringify(leads[1]), '']);
  });
});

describe("the contract's examples of the export", () => {
  const examples = CONTRACT.components.examples;
  const leads = (examples.LeadExportJsonLines.value as string)
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as LeadView);
  const records = leads.map(recordOf);

  it('are what the writers write for the same leads', () => {
    const jsonl = jsonLinesWriter();
    expect(jsonl.head() + jsonl.rows(records)).toBe(examples.LeadExportJsonLines.value);
    for (const [query, example] of [
      [{}, 'LeadExportCsv'],
      [{ delimiter: ';' }, 'LeadExportCsvSemicolon'],
      [{ delimiter: ';', columns: 'received_at,nome,email,communications_status,communications_recorded_at,utm_source' }, 'LeadExportCsvColumns'],
    ] as const) {
      const { writer } = exportRequestOf(Object.assign(new LeadExportQuery(), query), SAO_PAULO);
      expect(writer.head() + writer.rows(records)).toBe(examples[example].value);
    }
  });
});
