/** @database the q search: FTS5 on SQLite, pg_trgm or text search on PostgreSQL */
import { Logger } from '@nestjs/common';
import { Lead } from '../src/leads/lead.entity.js';
import { LeadReader, type LeadView } from '../src/leads/lead-reader.service.js';
import { searchDocument, searchPhrases } from '../src/leads/lead-search.js';
import { storedLead } from './support/stored-leads.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { itIf } from './support/skips.js';
import { ON_POSTGRES, startTestApp, TestApp } from './support/test-app.js';

/**
 * Operators search leads by name, e-mail or empresa with `q` (docs/decisions/0037-lead-search.md) on every read
 * surface: accents and letter case aside, each term the start of a word; paged and bound into the cursor; refused
 * when it is no search; and an erased lead leaves nothing to find, in the index either.
 */

type Json = Record<string, any>;

const PEOPLE = [
  { nome: 'João Silva', email: 'joao.silva@padaria.com.br', empresa: 'Padaria São Jorge' },
  { nome: 'JOANA Souza', email: 'ana@exemplo.com.br' },
  { nome: 'Ana Lima', email: 'ana@empresa.com.br', empresa: 'Empresa Ágil' },
  { nome: 'Marília Gonçalves', email: 'MARILIA@Gonçalves.example', empresa: 'Gonçalves & Filhos' },
  { nome: 'Luís Müller', email: 'luis@muller.example', empresa: null },
];

describe('searching leads with q', () => {
  let t: TestApp;
  let reader: string;
  /** Every lead, newest first, with its search document, to say what a search must find. */
  let all: (LeadView & { document: string })[];

  const get = (path: string, query: Record<string, string>, token = reader) =>
    t.http.get(path).query(query).set('Authorization', `Bearer ${token}`).then(expectContract);
  const list = (query: Record<string, string>) => get('/api/v1/leads', { screening: 'all', ...query });

  /** The ids the rule of the decision selects: every phrase at the start of a word of the lead's document. */
  const expected = (q: string) =>
    all.filter((lead) => searchPhrases(q).every((phrase) => lead.document.includes(` ${phrase.join(' ')}`))).map((lead) => lead.id);

  /** Every page of a search, following the Link header. */
  async function pages(q: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let res = await list({ q, limit: String(limit) });
    let count = 1;
    for (;;) {
      expect(res.status).toBe(200);
      ids.push(...res.body.data.map((lead: LeadView) => lead.id));
      if (res.body.next_cursor === null) return { ids, pages: count };
      res = await list({ q, limit: String(limit), cursor: res.body.next_cursor });
      count++;
    }
  }

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read leads:export', 'crm-search');
    for (const person of PEOPLE) {
      const body = Object.fromEntries(Object.entries(person).filter(([, value]) => value !== null));
      expect((await t.http.post('/api/v1/lead').send(body).then(expectContract)).status).toBe(201);
    }
    // Many of one surname, stored directly, a millisecond apart: pages of a search.
    const silvas = Array.from({ length: 30 }, (_, i) =>
      storedLead(i, { nome: `Maria Silva ${i}`, empresa: i % 2 ? 'Silvano Ltda' : null, receivedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, i)) }),
    );
    await t.dataSource.getRepository(Lead).insert(silvas);
    const res = await list({ limit: '200' });
    all = res.body.data.map((lead: LeadView) => ({ ...lead, document: searchDocument(lead.nome, lead.email, lead.empresa) }));
    expect(all).toHaveLength(35);
  });
  afterAll(() => t.close());

  it('finds by name, e-mail or empresa, accents and letter case aside', async () => {
    const names = async (q: string) => ((await list({ q })).body.data as LeadView[]).map((lead) => lead.nome);
    expect(await names('joao')).toEqual(['João Silva']);
    expect(await names('JOÃO')).toEqual(['João Silva']);
    expect(await names('joana')).toEqual(['JOANA Souza']);
    expect(await names('sao jorge')).toEqual(['João Silva']);
    expect(await names('agil')).toEqual(['Ana Lima']);
    expect(await names('GONCALVES')).toEqual(['Marília Gonçalves']);
    expect(await names('marília')).toEqual(['Marília Gonçalves']);
    expect(await names('muller luis')).toEqual(['Luís Müller']);
    // The start of a word, not its middle: "ana" is a word of two leads' e-mails, and starts no word of JOANA's name.
    expect(await names('ana')).toEqual(['Ana Lima', 'JOANA Souza']);
    expect(await names('oana')).toEqual([]);
    // Inside a term, words in a row: the address ana@empresa…, not ana@exemplo… (whose lead has no word "empresa").
    expect(await names('ana@empresa')).toEqual(['Ana Lima']);
    expect(await names('ana@emp')).toEqual(['Ana Lima']);
    expect(await names('empresa.com')).toEqual(['Ana Lima']);
    expect(await names('padaria.com.br')).toEqual(['João Silva']);
    expect(await names('joao xavier')).toEqual([]);
  });

  it('gives what the rule says for every query, on this database', async () => {
    for (const q of ['silva', 'SILVA', 'silv', 'silvano', 'maria silva', 'maria silva 1', 'silva 2', 'lead1', 'example', 'com br', 'a', 'ç', 'j s', 'zz']) {
      const ids = ((await list({ q, limit: '200' })).body.data as LeadView[]).map((lead) => lead.id);
      expect([q, ids]).toEqual([q, expected(q)]);
    }
  });

  it('pages a search with the cursor, which is bound to the search', async () => {
    const { ids, pages: count } = await pages('silva', 7);
    expect(ids).toEqual(expected('silva'));
    expect(ids).toHaveLength(31);
    expect(count).toBe(5);
    const first = await list({ q: 'silva', limit: '7' });
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)![1];
    expect(new URL(next).searchParams.get('q')).toBe('silva');
    // The same search written otherwise is the same search; another is not.
    expect((await list({ q: ' SILVA ', limit: '7', cursor: first.body.next_cursor })).status).toBe(200);
    const other = await list({ q: 'maria', limit: '7', cursor: first.body.next_cursor });
    expect([other.status, other.body.errors]).toEqual([400, [expect.objectContaining({ parameter: 'cursor', code: 'invalid_cursor' })]]);
    const none = await list({ limit: '7', cursor: first.body.next_cursor });
    expect([none.status, none.body.errors[0].code]).toEqual([400, 'invalid_cursor']);
  });

  it('refuses what is no search with 400 invalid_query naming q', async () => {
    const refused = async (query: string, code: string) => {
      const res = await t.http.get(`/api/v1/leads?${query}`).set('Authorization', `Bearer ${reader}`).then(expectContract);
      expect([query, res.status, res.body.code, res.body.errors]).toEqual([query, 400, 'invalid_query', [expect.objectContaining({ parameter: 'q', code })]]);
    };
    await refused('q=', 'too_short');
    await refused(`q=${'a'.repeat(101)}`, 'too_long');
    await refused(`q=${encodeURIComponent('é'.repeat(101))}`, 'too_long');
    await refused('q=%40%40%20-', 'invalid_format');
    await refused('q=%20%20', 'invalid_format');
    await refused('q=a%00b', 'invalid_format');
    await refused('q=a&q=b', 'repeated_parameter');
    // 100 code points, 200 UTF-16 units: a search.
    expect((await list({ q: '𝒜'.repeat(100) })).status).toBe(200);
    expect((await list({ q: 'a'.repeat(100) })).body.data).toEqual([]);
  });

  it('searches over GraphQL, MCP and the export too, refusing the same q', async () => {
    const gql = await t.http
      .post('/api/v1/graphql')
      .set('Authorization', `Bearer ${reader}`)
      .send({ query: 'query($q: String) { leads(first: 10, filter: { q: $q, screening: all }) { edges { node { nome } } } }', variables: { q: 'joão' } })
      .then(expectContract);
    expect(gql.body.data.leads.edges.map((edge: Json) => edge.node.nome)).toEqual(['João Silva']);
    const badGql = await t.http
      .post('/api/v1/graphql')
      .set('Authorization', `Bearer ${reader}`)
      .send({ query: '{ leads(filter: { q: "" }) { edges { cursor } } }' })
      .then(expectContract);
    expect(badGql.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.q' });

    const mcp = async (args: Json) => {
      const res = await t.http
        .post('/mcp')
        .set({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', Authorization: `Bearer ${reader}` })
        .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_leads', arguments: args } }))
        .then(expectContract);
      const data = /^data: (.*)$/m.exec(res.text)?.[1] ?? res.text;
      return JSON.parse(data).result;
    };
    expect(((await mcp({ q: 'MULLER', screening: 'all' })).structuredContent.data as LeadView[]).map((lead) => lead.nome)).toEqual(['Luís Müller']);
    expect((await mcp({ q: 'x'.repeat(101) })).isError).toBe(true);

    const exported = await get('/api/v1/leads/export', { format: 'jsonl', q: 'gonçalves', screening: 'all' });
    expect(exported.status).toBe(200);
    expect(
      exported.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).nome),
    ).toEqual(['Marília Gonçalves']);
  });

  it('counts up to a cap: exactly up to it, one more when there are more', async () => {
    const leads = t.app.get(LeadReader);
    expect(await leads.countUpTo({ q: 'silva' }, 100)).toBe(31);
    expect(await leads.countUpTo({ q: 'silva' }, 31)).toBe(31);
    expect(await leads.countUpTo({ q: 'silva' }, 10)).toBe(11);
    expect(await leads.countUpTo({ q: 'silvano ltda' }, 10_000)).toBe(15);
    expect(await leads.countUpTo({}, 10_000)).toBe(35);
    expect(await leads.countUpTo({ channel: 'api', screening: 'accepted' }, 10_000)).toBe(35);
  });

  itIf('postgres')('gives the same leads with the built-in text search as with pg_trgm (a server without the extension)', async () => {
    const like = t.app.get(LeadReader);
    const words = new LeadReader(t.dataSource);
    await t.dataSource.query(`CREATE INDEX leads_search_words_idx ON leads USING gin (to_tsvector('simple', search_folded))`);
    try {
      await words.onModuleInit();
      for (const q of ['silva', 'maria silva 1', 'ana@empresa', 'empresa.com', 'joão', 'sao jorge', 'oana', 'a', 'muller luis']) {
        const ids = (await words.list({ q }, 200)).data.map((lead) => lead.id);
        expect([q, ids]).toEqual([q, (await like.list({ q }, 200)).data.map((lead) => lead.id)]);
        expect([q, ids]).toEqual([q, expected(q)]);
      }
    } finally {
      await t.dataSource.query('DROP INDEX leads_search_words_idx');
    }
  });

  it('finds nothing of an erased person, and on SQLite leaves no word of theirs in the search index', async () => {
    const person = { nome: 'Ximena Quorvath', email: 'ximena.quorvath@exemplo.org', empresa: 'Yzbek Quorvath' };
    expect((await t.http.post('/api/v1/lead').send(person)).status).toBe(201);
    expect((await list({ q: 'ximena' })).body.data).toHaveLength(1);
    const indexHolds = async (word: string) => {
      // The FTS5 segments: a term is stored whole after one with another first letter, and no other term here starts with x or y.
      const rows = (await t.dataSource.query('SELECT block FROM leads_search_data')) as { block: Buffer | null }[];
      return rows.some((row) => row.block !== null && Buffer.from(row.block).toString('latin1').includes(word));
    };
    if (!ON_POSTGRES) expect(await indexHolds('ximena')).toBe(true);
    const erased = await t.http
      .post('/api/v1/data-subject-requests/erasure')
      .set('Authorization', `Bearer ${await operatorToken(t, 'leads:erase')}`)
      .send({ email: person.email })
      .then(expectContract);
    expect([erased.status, erased.body.counts.leads]).toEqual([200, 1]);
    for (const q of ['ximena', 'quorvath', 'yzbek']) expect((await list({ q })).body.data).toEqual([]);
    if (!ON_POSTGRES) {
      expect(await indexHolds('ximena')).toBe(false);
      expect(await indexHolds('yzbek')).toBe(false);
      // Nor anywhere in the file (the erasure checkpointed the WAL into it).
      const { readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const file = readFileSync(join(t.config.dataDir, 'leads.sqlite')).toString('latin1');
      expect(['ximena', 'quorvath', 'yzbek'].filter((word) => file.includes(word))).toEqual([]);
    }
  });

  it('writes no search to the logs', async () => {
    const lines: unknown[] = [];
    const spy = jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void lines.push(message));
    try {
      await list({ q: 'joana souza' });
    } finally {
      spy.mockRestore();
    }
    expect(lines).toContainEqual(expect.objectContaining({ audit: 'lead_read', filters: expect.objectContaining({ search: true }) }));
    expect(JSON.stringify(lines)).not.toMatch(/joana|souza/i);
  });
});

/** Of the newer leads a fifth are Silva (a common word), and one in twenty is held, half of those a Silva. */
const newerHeld = (i: number) => i % 40 < 2;

describe('searching past the newest leads', () => {
  // Beyond what a search reads row by row before it asks the index (4,000 of the newest leads): the oldest leads, one
  // rare name among them, are found through the index, in the list, the export and the counts, whichever plan each takes.
  let t: TestApp;
  let reader: string;
  const get = (path: string, query: Record<string, string>) => t.http.get(path).query(query).set('Authorization', `Bearer ${reader}`).then(expectContract);

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read leads:export', 'crm-search-deep');
    const at = (ms: number) => new Date(Date.UTC(2024, 0, 1) + ms);
    const rare = [0, 1, 2].map((i) => storedLead(i, { nome: `Iolanda Quaresma ${i}`, receivedAt: at(i), screeningVerdict: i === 2 ? 'held' : 'accepted' }));
    const newer = Array.from({ length: 4500 }, (_, i) =>
      storedLead(i + 3, { nome: i % 5 ? `Pessoa ${i}` : `Pessoa Silva ${i}`, receivedAt: at(1000 + i), screeningVerdict: newerHeld(i) ? 'held' : 'accepted' }),
    );
    const rows = [...rare, ...newer];
    for (let start = 0; start < rows.length; start += 500) await t.dataSource.getRepository(Lead).insert(rows.slice(start, start + 500));
  });
  afterAll(() => t.close());

  it('finds a rare name older than the newest leads in the list, the export and the counts', async () => {
    const listed = await get('/api/v1/leads', { q: 'quaresma', screening: 'all' });
    expect(listed.body.data.map((lead: LeadView) => lead.nome)).toEqual(['Iolanda Quaresma 2', 'Iolanda Quaresma 1', 'Iolanda Quaresma 0']);
    expect(listed.body.held_count).toBe(1);
    const exported = await get('/api/v1/leads/export', { format: 'jsonl', q: 'quaresma' });
    expect(
      exported.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).nome),
    ).toEqual(['Iolanda Quaresma 1', 'Iolanda Quaresma 0']);
    const leads = t.app.get(LeadReader);
    expect(await leads.countUpTo({ q: 'quaresma' }, 10_000)).toBe(3);
    expect(await leads.countUpTo({ q: 'quaresma', screening: 'held' }, 10_000)).toBe(1);
    expect(await leads.heldCount({ q: 'quaresma' })).toBe(1);
  });

  it('lists and counts a common word among the held leads as among all', async () => {
    const leads = t.app.get(LeadReader);
    // Newest first, in pages: the held Silvas are the newer leads numbered i % 40 === 0 (number i + 3).
    const heldSilvas = Array.from({ length: 4500 }, (_, i) => i)
      .filter((i) => newerHeld(i) && i % 5 === 0)
      .reverse()
      .map((i) => `Pessoa Silva ${i}`);
    const seen: string[] = [];
    let res = await get('/api/v1/leads', { q: 'silva', screening: 'held', limit: '50' });
    for (;;) {
      seen.push(...res.body.data.map((lead: LeadView) => lead.nome));
      expect(res.body.held_count).toBe(heldSilvas.length);
      if (res.body.next_cursor === null) break;
      res = await get('/api/v1/leads', { q: 'silva', screening: 'held', limit: '50', cursor: res.body.next_cursor });
    }
    expect(seen).toEqual(heldSilvas);
    const held = Array.from({ length: 4500 }, (_, i) => i).filter(newerHeld);
    expect(await leads.countUpTo({ screening: 'held' }, 10_000)).toBe(held.length + 1);
    expect(await leads.countUpTo({ q: 'silva', screening: 'held' }, 10_000)).toBe(held.filter((i) => i % 5 === 0).length);
    expect(await leads.countUpTo({ q: 'pessoa', screening: 'held' }, 10_000)).toBe(held.length);
    expect(await leads.heldCount({ q: 'pessoa' })).toBe(held.length);
    expect(await leads.countUpTo({ q: 'silva' }, 10_000)).toBe(900);
  });
});
