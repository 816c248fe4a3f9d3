/** @database consent wordings and context columns */
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { Response } from 'supertest';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

/**
 * Consent and attribution on leads (docs/decisions/0028-consent-attribution-and-data-subject-rights.md): the optional
 * `legal_bases`, `consent_text` and `context` members, through POST /api/v1/lead and the sandbox, every refusal with its
 * pointer (nothing stored), the evidence the service records, each wording stored once, and the read surfaces
 * (REST, export, GraphQL) carrying them. Every response is checked against the contract.
 */

const WORDING = 'Aceito receber comunicações da Souza Benefícios por e-mail e telefone.';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const CONSENT = { category: 'communications', type: 'consent', status: 'granted' } as const;
const PROCESSING = { category: 'data_processing', type: 'legitimate_interest', status: 'granted' } as const;
const MINIMAL = { nome: 'Ana Lima', email: 'ana.lima@exemplo.com.br' };

describe('consent and attribution on leads', () => {
  let t: TestApp;
  let reader: string;
  let exporter: string;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post(path)
      .set(headers)
      .send(body as object)
      .then(expectContract);
  const read = (id: string) => t.http.get(`/api/v1/leads/${id}`).set('Authorization', `Bearer ${reader}`).then(expectContract);
  const consentTexts = async () => (await t.dataSource.query('SELECT sha256, text FROM consent_texts ORDER BY sha256')) as { sha256: string; text: string }[];

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read');
    exporter = await operatorToken(t, 'leads:export');
  });

  afterAll(() => t.close());

  describe('a lead with legal bases, a consent wording and a context', () => {
    const body = {
      ...MINIMAL,
      legal_bases: [CONSENT, PROCESSING],
      consent_text: `  ${WORDING}\n`,
      context: {
        page_url: 'https://user:secret@www.exemplo.com.br/beneficios/vale?email=ana%40exemplo.com.br&token=abc#form',
        page_title: ' Vale-refeição | Souza ',
        referrer: 'http://busca.exemplo/search?q=vale+refei%C3%A7%C3%A3o',
        utm_source: 'google',
        utm_medium: 'cpc',
        utm_campaign: 'vale-refeicao-2026',
        utm_term: 'vale refeição',
        utm_content: 'anuncio-a',
        gclid: 'Cj0KCQiA',
        fbclid: 'IwAR2x',
      },
    };
    let created: Response;

    beforeAll(async () => {
      created = await post('/api/v1/lead', body, { Origin: 'https://cliente.example' });
    });

    it('is stored (201), and the read API shows the evidence the service recorded', async () => {
      expect(created.status).toBe(201);
      const res = await read(created.body.id);
      expect(res.status).toBe(200);
      const recorded = { recorded_at: created.body.received_at, channel: 'form', revoked_at: null };
      expect(res.body.legal_bases).toEqual([
        { ...CONSENT, ...recorded, consent_text_sha256: sha256(WORDING) },
        { ...PROCESSING, ...recorded, consent_text_sha256: null },
      ]);
    });

    it('keeps URLs without query string, fragment and credentials, and the other members trimmed', async () => {
      const res = await read(created.body.id);
      expect(res.body.context).toEqual({
        page_url: 'https://www.exemplo.com.br/beneficios/vale',
        page_title: 'Vale-refeição | Souza',
        referrer: 'http://busca.exemplo/search',
        utm_source: 'google',
        utm_medium: 'cpc',
        utm_campaign: 'vale-refeicao-2026',
        utm_term: 'vale refeição',
        utm_content: 'anuncio-a',
        gclid: 'Cj0KCQiA',
        fbclid: 'IwAR2x',
      });
      expect(JSON.stringify(await t.dataSource.query('SELECT * FROM leads'))).not.toMatch(/secret|token=abc|ana%40/);
    });

    it('stores the wording once, however many leads bring it, and every lead names it', async () => {
      const again = await Promise.all([1, 2, 3].map((i) => post('/api/v1/lead', { ...body, email: `outra${i}@exemplo.com.br` })));
      expect(again.map((res) => res.status)).toEqual([201, 201, 201]);
      expect(await consentTexts()).toEqual([{ sha256: sha256(WORDING), text: WORDING }]);
      for (const res of again) expect((await read(res.body.id)).body.legal_bases[0].consent_text_sha256).toBe(sha256(WORDING));
    });

    it('is in the export, one column per context member and per legal basis category', async () => {
      const csv = await t.http.get('/api/v1/leads/export?format=csv').set('Authorization', `Bearer ${exporter}`).then(expectContract);
      const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
      expect(rows.find((row) => row.id === created.body.id)).toMatchObject({
        page_url: 'https://www.exemplo.com.br/beneficios/vale',
        utm_campaign: 'vale-refeicao-2026',
        communications_type: 'consent',
        communications_status: 'granted',
        communications_recorded_at: created.body.received_at,
        communications_revoked_at: '',
        data_processing_type: 'legitimate_interest',
        consent_text_sha256: sha256(WORDING),
      });
      const jsonl = await t.http.get('/api/v1/leads/export?format=jsonl').set('Authorization', `Bearer ${exporter}`).then(expectContract);
      const lines = jsonl.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string });
      expect(lines.find((line) => line.id === created.body.id)).toEqual((await read(created.body.id)).body);
    });

    it('is in GraphQL, with the same names', async () => {
      const query = `{ lead(id: "${created.body.id}") { legal_bases { category type status recorded_at channel consent_text_sha256 revoked_at } context { page_url utm_source fbclid } } }`;
      const res = await t.http.post('/api/v1/graphql').set('Authorization', `Bearer ${reader}`).send({ query }).then(expectContract);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.lead.legal_bases[0]).toEqual({
        ...CONSENT,
        recorded_at: created.body.received_at,
        channel: 'form',
        consent_text_sha256: sha256(WORDING),
        revoked_at: null,
      });
      expect(res.body.data.lead.context).toEqual({ page_url: 'https://www.exemplo.com.br/beneficios/vale', utm_source: 'google', fbclid: 'IwAR2x' });
    });
  });

  it('gives a lead without them an empty list and an empty context, as before', async () => {
    const created = await post('/api/v1/lead', MINIMAL);
    expect(created.status).toBe(201);
    expect((await read(created.body.id)).body).toMatchObject({ legal_bases: [], context: {} });
  });

  it('has the sandbox return them normalised and store nothing, not even the wording', async () => {
    const before = [await countLeads(t.dataSource), (await consentTexts()).length];
    const res = await post('/api/v1/sandbox', {
      ...MINIMAL,
      legal_bases: [{ ...CONSENT, status: 'declined' }],
      consent_text: ' Quero receber novidades. ',
      context: { page_url: 'https://exemplo.com.br/a?b=c', utm_source: ' news ' },
    });
    expect(res.status).toBe(200);
    expect(res.body.lead).toEqual({
      ...MINIMAL,
      legal_bases: [{ ...CONSENT, status: 'declined' }],
      consent_text: 'Quero receber novidades.',
      context: { page_url: 'https://exemplo.com.br/a', utm_source: 'news' },
    });
    expect([await countLeads(t.dataSource), (await consentTexts()).length]).toEqual(before);
  });

  it('replays an Idempotency-Key for the same lead and refuses it for other consent or context', async () => {
    const body = { ...MINIMAL, legal_bases: [CONSENT], consent_text: WORDING, context: { utm_source: 'a', utm_medium: 'b' } };
    const key = 'consent-idem-1';
    const first = await post('/api/v1/lead', body, { 'Idempotency-Key': key });
    // The same members in another order are the same lead.
    const replay = await post('/api/v1/lead', { ...body, context: { utm_medium: 'b', utm_source: 'a' } }, { 'Idempotency-Key': key });
    expect([first.status, replay.status, replay.body]).toEqual([201, 201, first.body]);
    const other = await post('/api/v1/lead', { ...body, legal_bases: [{ ...CONSENT, status: 'declined' }] }, { 'Idempotency-Key': key });
    expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
  });

  describe('refusals: 422 with a pointer to the member, and nothing stored', () => {
    const long = (n: number) => 'a'.repeat(n);
    it.each<[string, Record<string, unknown>, [string, string][]]>([
      ['legal_bases that is not an array', { legal_bases: CONSENT }, [['/legal_bases', 'invalid_type']]],
      ['five legal bases', { legal_bases: [CONSENT, PROCESSING, CONSENT, PROCESSING, CONSENT] }, [['/legal_bases', 'too_many_items']]],
      ['an entry that is not an object', { legal_bases: ['consent'] }, [['/legal_bases/0', 'invalid_type']]],
      ['an unknown member in an entry', { legal_bases: [{ ...CONSENT, source: 'x' }] }, [['/legal_bases/0/source', 'unknown_field']]],
      ['an entry without status', { legal_bases: [{ category: 'communications', type: 'consent' }] }, [['/legal_bases/0/status', 'required']]],
      ['an unknown type', { legal_bases: [{ ...CONSENT, type: 'opt_in' }] }, [['/legal_bases/0/type', 'invalid_value']]],
      ['a category that is a number', { legal_bases: [{ ...CONSENT, category: 1 }] }, [['/legal_bases/0/category', 'invalid_type']]],
      ['a status in capitals', { legal_bases: [{ ...CONSENT, status: 'GRANTED' }] }, [['/legal_bases/0/status', 'invalid_value']]],
      ['a repeated category', { legal_bases: [CONSENT, { ...CONSENT, status: 'declined' }] }, [['/legal_bases/1/category', 'duplicate']]],
      ['a wording without a consent entry', { legal_bases: [PROCESSING], consent_text: WORDING }, [['/consent_text', 'invalid_value']]],
      ['a wording without legal bases', { consent_text: WORDING }, [['/consent_text', 'invalid_value']]],
      ['a wording of 2,001 characters', { legal_bases: [CONSENT], consent_text: long(2001) }, [['/consent_text', 'too_long']]],
      ['a blank wording', { legal_bases: [CONSENT], consent_text: ' \u200B ' }, [['/consent_text', 'too_short']]],
      ['a wording with a bidi override', { legal_bases: [CONSENT], consent_text: 'Aceito \u202E' }, [['/consent_text', 'invalid_characters']]],
      ['a wording that is not a string', { legal_bases: [CONSENT], consent_text: true }, [['/consent_text', 'invalid_type']]],
      // Wordings are named by their hash: one that looks like another must not hash apart from it.
      ['a wording with a zero-width space', { legal_bases: [CONSENT], consent_text: 'Aceito\u200B receber' }, [['/consent_text', 'invalid_characters']]],
      ['a wording with a word joiner', { legal_bases: [CONSENT], consent_text: 'Aceito\u2060 receber' }, [['/consent_text', 'invalid_characters']]],
      ['a wording with U+FEFF inside', { legal_bases: [CONSENT], consent_text: 'Aceito \uFEFFreceber' }, [['/consent_text', 'invalid_characters']]],
      ['a wording with a soft hyphen', { legal_bases: [CONSENT], consent_text: 'comuni\u00ADcações' }, [['/consent_text', 'invalid_characters']]],
      ['a wording with a joiner between Latin letters', { legal_bases: [CONSENT], consent_text: 'Acei\u200Dto' }, [['/consent_text', 'invalid_characters']]],
      [
        'a wording with a non-joiner between Latin letters',
        { legal_bases: [CONSENT], consent_text: 'Acei\u200Cto' },
        [['/consent_text', 'invalid_characters']],
      ],
      [
        'a wording with five combining marks on a letter',
        { legal_bases: [CONSENT], consent_text: 'Aceito\u0336\u0336\u0336\u0336\u0336 receber' },
        [['/consent_text', 'invalid_characters']],
      ],
      ['a context that is an array', { context: [] }, [['/context', 'invalid_type']]],
      ['a context that is a string', { context: 'google' }, [['/context', 'invalid_type']]],
      ['an unknown context member', { context: { utm_id: '1' } }, [['/context/utm_id', 'unknown_field']]],
      ['a page_url that is ftp', { context: { page_url: 'ftp://exemplo.com.br/a' } }, [['/context/page_url', 'scheme_not_allowed']]],
      ['a page_url that is javascript', { context: { page_url: 'javascript:alert(1)' } }, [['/context/page_url', 'scheme_not_allowed']]],
      ['a relative referrer', { context: { referrer: '/contato' } }, [['/context/referrer', 'invalid_url']]],
      ['a page_url of 2,049 characters', { context: { page_url: `https://exemplo.com.br/${long(2049 - 23)}` } }, [['/context/page_url', 'too_long']]],
      // Within the bound as sent, past it as stored: each 😀 is 12 characters percent-encoded, each é 6.
      [
        'a page_url that percent-encoding takes past 2,048',
        { context: { page_url: `https://exemplo.com.br/${'😀'.repeat(1000)}` } },
        [['/context/page_url', 'too_long']],
      ],
      [
        'a referrer that percent-encoding takes past 2,048',
        { context: { referrer: `https://exemplo.com.br/${'é'.repeat(400)}` } },
        [['/context/referrer', 'too_long']],
      ],
      ['a utm_source of 257 characters', { context: { utm_source: long(257) } }, [['/context/utm_source', 'too_long']]],
      ['a blank utm_term', { context: { utm_term: '   ' } }, [['/context/utm_term', 'too_short']]],
      ['a number for gclid', { context: { gclid: 123 } }, [['/context/gclid', 'invalid_type']]],
      ['a line break in page_title', { context: { page_title: 'a\nb' } }, [['/context/page_title', 'invalid_characters']]],
      ['__proto__ in context', JSON.parse('{"context":{"__proto__":{"x":1}}}') as Record<string, unknown>, [['/context/__proto__', 'forbidden_key']]],
      [
        'errors in several members, in member order',
        { context: { utm_id: '1' }, consent_text: 1, legal_bases: 'x', email: 'nobody' },
        [
          ['/email', 'invalid_format'],
          ['/legal_bases', 'invalid_type'],
          ['/consent_text', 'invalid_type'],
          ['/context/utm_id', 'unknown_field'],
        ],
      ],
    ])('%s', async (_name, extra, errors) => {
      const before = [await countLeads(t.dataSource), (await consentTexts()).length];
      for (const path of ['/api/v1/lead', '/api/v1/sandbox']) {
        const res = await post(path, { ...MINIMAL, ...extra });
        expect([res.status, res.body.code]).toEqual([422, 'validation_failed']);
        expect((res.body.errors as { pointer: string; code: string }[]).map((error) => [error.pointer, error.code])).toEqual(errors);
      }
      expect([await countLeads(t.dataSource), (await consentTexts()).length]).toEqual(before);
    });
  });

  it('stores a wording with the joiners scripts and emoji need and four marks on a letter, and a URL of 2,048 once encoded', async () => {
    const wording = 'می\u200Cخواهم क्\u200Dष 👩\u200D💻 Ê\u0323\u0301\u0300\u0303';
    const pageUrl = `https://exemplo.com.br/${'é'.repeat(337)}ppp`;
    const stored = `https://exemplo.com.br/${'%C3%A9'.repeat(337)}ppp`;
    expect(stored).toHaveLength(2048);
    const res = await post('/api/v1/lead', { ...MINIMAL, legal_bases: [CONSENT], consent_text: wording, context: { page_url: `${pageUrl}?q=1` } });
    expect(res.status).toBe(201);
    const lead = await read(res.body.id);
    expect(lead.body.context.page_url).toBe(stored);
    expect(lead.body.legal_bases[0].consent_text_sha256).toBe(sha256(wording.normalize('NFC')));
  });

  it('accepts a lead at every bound of the new members, in Portuguese, under the body limit', async () => {
    const accented = (n: number) => 'ção '.repeat(Math.ceil(n / 4)).slice(0, n - 1) + 'x';
    const body = {
      nome: accented(120),
      email: 'ana@exemplo.com.br',
      telefone: '+55 (11) 98765-4321',
      empresa: accented(120),
      mensagem: accented(5000),
      origem: accented(64),
      legal_bases: [CONSENT, PROCESSING],
      consent_text: accented(2000),
      context: {
        page_url: `https://exemplo.com.br/${'p'.repeat(2048 - 23)}`,
        referrer: `https://exemplo.com.br/${'p'.repeat(2048 - 23)}`,
        ...Object.fromEntries(
          ['page_title', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gclid', 'fbclid'].map((m) => [m, accented(256)]),
        ),
      },
    };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(16 * 1024);
    const res = await post('/api/v1/lead', body);
    expect(res.status).toBe(201);
  });
});
