import { parse } from 'csv-parse/sync';
import { CONTRACT } from '../../test/support/contract.js';
import { CSV_COLUMNS, csvWriter, jsonLinesWriter } from './lead-export.format.js';
import type { LeadRecord } from './lead-export.reader.js';
import { LEAD_VIEW_COLUMNS, LeadView } from './lead-reader.service.js';

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
  ...over,
});
/** A lead as the export reader gives it: the JSON columns as text, null when empty (as stored). */
const recordOf = (lead: LeadView): LeadRecord =>
  LEAD_VIEW_COLUMNS.map((column) => {
    if (column === 'legal_bases') return lead.legal_bases.length ? JSON.stringify(lead.legal_bases) : null;
    if (column === 'context') return Object.keys(lead.context).length ? JSON.stringify(lead.context) : null;
    return lead[column];
  });
const row = (over: Partial<LeadView>): LeadRecord => recordOf(view(over));
/** The plain members of a view, as csv-parse reads them back. */
const plain = (lead: LeadView) => Object.fromEntries(Object.entries(lead).filter(([key]) => key !== 'legal_bases' && key !== 'context'));
/** The empty cells of a lead with no context and no legal bases. */
const NO_EXTRAS = ','.repeat(CSV_COLUMNS.length - LEAD_VIEW_COLUMNS.length + 2);

describe('csvWriter', () => {
  it('writes the header row and CRLF records, quoting only what needs it', () => {
    const csv = csvWriter(',');
    const text = csv.head() + csv.rows([row({ empresa: 'Souza, Filhos & Cia', mensagem: 'diz "olá"' })]);
    expect(text).toBe(
      `${CSV_COLUMNS.join(',')}\r\n` +
        `0193a3c2-7b8e-7c1e-9f00-000000000001,2026-11-25T10:00:00.000Z,Maria Souza,maria@example.com,,,"Souza, Filhos & Cia","diz ""olá""",,api,,${NO_EXTRAS}\r\n`,
    );
  });

  it.each(['linha 1\nlinha 2', 'linha 1\r\nlinha 2', 'linha 1\rlinha 2'])('quotes a field with a line break (%j), which parses back', (mensagem) => {
    const csv = csvWriter(',');
    const text = csv.head() + csv.rows([row({ mensagem })]);
    expect(text).toContain(`"${mensagem}"`);
    expect((parse(text, { columns: true }) as Record<string, string>[])[0].mensagem).toBe(mensagem);
  });

  it('gives the ; profile a BOM, semicolons, and quotes a semicolon but not a comma', () => {
    const csv = csvWriter(';');
    const text = csv.head() + csv.rows([row({ empresa: 'A; B', mensagem: 'a, b' })]);
    expect(text.startsWith(`\ufeff${CSV_COLUMNS.join(';')}\r\n`)).toBe(true);
    expect(text).toContain(';"A; B";a, b;');
    const [parsed] = parse(text, { delimiter: ';', bom: true, columns: true }) as Record<string, string>[];
    expect(parsed).toMatchObject({ ...plain(view({ empresa: 'A; B', mensagem: 'a, b' })), ...NULLS_AS_EMPTY });
  });

  it('writes each context member and each legal basis category in columns of their own, neutralised too', () => {
    const csv = csvWriter(',');
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

  it('neutralises formula cells and keeps plain numbers', () => {
    const csv = csvWriter(',');
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
    for (const [delimiter, example] of [
      [',', 'LeadExportCsv'],
      [';', 'LeadExportCsvSemicolon'],
    ] as const) {
      const csv = csvWriter(delimiter);
      expect(csv.head() + csv.rows(records)).toBe(examples[example].value);
    }
  });
});
