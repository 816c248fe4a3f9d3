import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { loadConfig } from '../config/config.js';
import { ConfigModule } from '../config/config.module.js';
import { TelemetryModule } from '../telemetry/telemetry.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { Lead } from './lead.entity.js';
import { storedLead } from '../../test/support/stored-leads.js';
import { filterBinding, InvalidCursor, LeadFilter, LeadReader, LeadView, openCursor, sealCursor, verdictCondition } from './lead-reader.service.js';
import { LeadsModule } from './leads.module.js';

describe('lead cursors', () => {
  const key = randomBytes(32);
  const id = '019a2f3c-1d2e-7abc-8def-0123456789ab';
  const binding = filterBinding({ origem: 'site' });
  const cursor = sealCursor(key, binding, 1_795_000_000_123, id);

  it('are base64url and give back the position they were sealed with', () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThan(100);
    expect(openCursor(key, binding, cursor)).toEqual({ receivedAt: 1_795_000_000_123, id });
  });

  it('belong to their filters: the same filters written otherwise share them, other filters do not', () => {
    const filter: LeadFilter = { since: new Date('2026-11-01T00:00:00Z'), email: 'Élodie@Example.com' };
    const sealed = sealCursor(key, filterBinding(filter), 1, id);
    expect(openCursor(key, filterBinding({ email: 'élodie@example.com', since: new Date('2026-10-31T21:00:00-03:00') }), sealed)).toEqual({
      receivedAt: 1,
      id,
    });
    for (const other of [
      {},
      { ...filter, until: new Date('2027-01-01T00:00:00Z') },
      { ...filter, email: 'elodie@example.com' },
      { ...filter, origem: 'site' },
    ]) {
      expect(() => openCursor(key, filterBinding(other), sealed)).toThrow(InvalidCursor);
    }
  });

  it('refuse any change to a byte, and a cursor sealed with another key', () => {
    const bytes = Buffer.from(cursor, 'base64url');
    for (let at = 0; at < bytes.length; at++) {
      const altered = Buffer.from(bytes);
      altered[at] ^= 0x01;
      expect(() => openCursor(key, binding, altered.toString('base64url'))).toThrow(InvalidCursor);
    }
    expect(() => openCursor(randomBytes(32), binding, cursor)).toThrow(InvalidCursor);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/='],
    ['too short for a tag', 'AQID'],
    ['too long', 'A'.repeat(201)],
    ['a tag and no payload', Buffer.alloc(17, 1).toString('base64url')],
    ['a position sealed as it should not be', sealCursor(key, binding, Number.NaN, 'x')],
  ])('refuse %s', (_name, text) => {
    expect(() => openCursor(key, binding, text)).toThrow(InvalidCursor);
  });
});

const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('LeadReader on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let reader: LeadReader;
  let close: () => Promise<void>;
  let stored: Lead[];

  /** Newest first, ties by id descending: the order every page must follow. */
  const ordered = (leads: Lead[]) =>
    [...leads].sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((lead) => lead.id);

  function lead(receivedAt: string, overrides: Partial<Lead> = {}): Lead {
    return storedLead(stored.length, { nome: 'Ana', email: `lead-${stored.length}@example.com`, receivedAt: new Date(receivedAt), ...overrides });
  }

  async function all(filter: LeadFilter, limit: number): Promise<LeadView[]> {
    const seen: LeadView[] = [];
    let cursor: string | undefined;
    do {
      const page = await reader.list(filter, limit, cursor);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      seen.push(...page.data);
      cursor = page.nextCursor ?? undefined;
      if (cursor !== undefined) expect(cursor).toBe(page.cursorAfter(page.data.length - 1));
    } while (cursor !== undefined);
    return seen;
  }

  beforeAll(async () => {
    database = await freshDatabase(kind);
    const config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    const module = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), TelemetryModule, DatabaseModule.forRoot(config), SecretsModule, LeadsModule],
    }).compile();
    const app = await module.init();
    dataSource = app.get<DataSource>(getDataSourceToken());
    reader = app.get(LeadReader);
    close = async () => {
      await app.close();
      await database.drop();
    };
    stored = [];
    // Runs of equal timestamps (ids break the tie), both sides of midnight UTC, and a millisecond apart.
    for (let i = 0; i < 40; i++) stored.push(lead('2026-11-21T23:59:59.999Z', { origem: i % 2 ? 'site' : 'feira' }));
    stored.push(lead('2026-11-22T00:00:00.000Z', { origem: 'site' }), lead('2026-11-22T00:00:00.001Z'));
    for (let i = 0; i < 25; i++) stored.push(lead('2026-11-22T10:30:00.500Z', { origem: 'site' }));
    stored.push(lead('2026-11-22T12:00:00.000Z', { email: 'ÉLODIE@Example.com' }), lead('2026-11-23T08:00:00.000Z', { email: 'élodie@example.com' }));
    stored.push(lead('2026-11-23T09:00:00.000Z', { email: 'Elodie@example.com' }));
    // A review queue: held and spam leads among the accepted ones, two of them at one instant.
    for (const [i, at] of ['2026-11-19T08:00:00.000Z', '2026-11-20T10:30:00.500Z', '2026-11-20T10:30:00.500Z', '2026-11-21T10:00:00.000Z'].entries()) {
      stored.push(
        lead(at, { screeningVerdict: 'held', screeningReasons: ['too_many_links'] }),
        lead(at, { screeningVerdict: 'spam', screeningReasons: ['honeypot'], origem: i % 2 ? 'site' : null }),
      );
    }
    await dataSource.getRepository(Lead).insert(stored);
  });
  afterAll(() => close());

  it('reads every lead once, newest first, through pages of any size', async () => {
    for (const limit of [1, 7, 50, 200]) expect((await all({}, limit)).map((view) => view.id)).toEqual(ordered(stored));
  });

  it('ends with a null cursor when the page holds the last lead, even when it is full', async () => {
    const page = await reader.list({}, stored.length);
    expect([page.data.length, page.nextCursor]).toEqual([stored.length, null]);
  });

  it('shows a lead as it was stored, received_at in ISO 8601 UTC with milliseconds', async () => {
    const newest = stored.find((row) => row.email === 'Elodie@example.com')!;
    const expected: LeadView = {
      id: newest.id,
      received_at: '2026-11-23T09:00:00.000Z',
      nome: 'Ana',
      email: 'Elodie@example.com',
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
      screening: { verdict: 'accepted', reasons: [], decided_by: 'screening', decided_at: newest.screeningDecidedAt.toISOString() },
    };
    expect((await reader.list({}, 1)).data).toEqual([expected]);
    expect(await reader.get(newest.id)).toEqual(expected);
    expect(await reader.get(newest.id.toUpperCase())).toEqual(expected);
  });

  it.each(['', 'export', 'not-a-uuid', '019a2f3c1d2e7abc8def0123456789ab', `{${uuidv7()}}`, uuidv7()])('finds no lead for the id %j', async (id) => {
    expect(await reader.get(id)).toBeNull();
  });

  it('takes since as inclusive and until as exclusive, to the millisecond', async () => {
    const ids = async (filter: LeadFilter) => (await all(filter, 10)).map((view) => view.id);
    const between = (from: string, to: string) =>
      ordered(stored.filter((row) => row.receivedAt.getTime() >= Date.parse(from) && row.receivedAt.getTime() < Date.parse(to)));
    expect(await ids({ since: new Date('2026-11-22T00:00:00.000Z') })).toEqual(between('2026-11-22T00:00:00.000Z', '2100-01-01T00:00:00Z'));
    expect(await ids({ until: new Date('2026-11-22T00:00:00.000Z') })).toEqual(between('2000-01-01T00:00:00Z', '2026-11-22T00:00:00.000Z'));
    expect(await ids({ since: new Date('2026-11-22T00:00:00.001Z'), until: new Date('2026-11-22T10:30:00.500Z') })).toHaveLength(1);
    expect(await ids({ since: new Date('2026-11-22T10:30:00.500Z'), until: new Date('2026-11-22T10:30:00.501Z') })).toHaveLength(25);
    // The same instant written with an offset: 2026-11-21T21:00:00-03:00 is midnight UTC.
    expect(await ids({ since: new Date('2026-11-21T21:00:00.000-03:00') })).toEqual(await ids({ since: new Date('2026-11-22T00:00:00Z') }));
  });

  it('matches origem exactly and the e-mail in any letter case, accents included', async () => {
    expect((await all({ origem: 'site' }, 6)).map((view) => view.id)).toEqual(ordered(stored.filter((row) => row.origem === 'site')));
    expect(await all({ origem: 'Site' }, 6)).toEqual([]);
    const elodie = ordered(stored.filter((row) => row.emailFolded === 'élodie@example.com'));
    expect(elodie).toHaveLength(2);
    for (const email of ['élodie@example.com', 'ÉLODIE@EXAMPLE.COM', 'E\u0301lodie@example.com'])
      expect((await all({ email }, 1)).map((view) => view.id)).toEqual(elodie);
    expect((await all({ email: 'elodie@example.com' }, 1)).map((view) => view.email)).toEqual(['Elodie@example.com']);
  });

  it('lists one verdict through its own index, and counts the held ones under the other filters', async () => {
    for (const verdict of ['accepted', 'held', 'spam'] as const) {
      const ids = ordered(stored.filter((row) => row.screeningVerdict === verdict));
      for (const limit of [1, 3, 200]) expect((await all({ screening: verdict }, limit)).map((view) => view.id)).toEqual(ids);
    }
    expect((await all({ screening: 'spam', origem: 'site' }, 1)).map((view) => view.id)).toEqual(
      ordered(stored.filter((row) => row.screeningVerdict === 'spam' && row.origem === 'site')),
    );
    expect((await reader.list({ screening: 'accepted' }, 1)).heldCount).toBe(4);
    expect((await reader.list({ since: new Date('2026-11-20T00:00:00Z') }, 1)).heldCount).toBe(3);
    expect(() => verdictCondition("accepted' OR '1' = '1" as never)).toThrow(RangeError);
  });

  it('refuses a cursor of other filters, and keeps one for the same filters', async () => {
    const first = await reader.list({ origem: 'site' }, 2);
    await expect(reader.list({ origem: 'feira' }, 2, first.nextCursor!)).rejects.toThrow(InvalidCursor);
    await expect(reader.list({}, 2, first.nextCursor!)).rejects.toThrow(InvalidCursor);
    expect((await reader.list({ origem: 'site' }, 5, first.nextCursor!)).data[0].id).toBe(ordered(stored.filter((row) => row.origem === 'site'))[2]);
  });

  it.each<[string, LeadFilter, RegExp]>([
    ['no filter', {}, /leads_received_at_id_idx/],
    ['since and until', { since: new Date('2026-11-01T00:00:00Z'), until: new Date('2026-12-01T00:00:00Z') }, /leads_received_at_id_idx/],
    ['email', { email: 'ÉLODIE@example.com' }, /leads_email_folded_idx/],
    ['origem', { origem: 'site' }, /leads_(origem|received_at_id)_idx/],
    ["the accepted verdict (the read surfaces' default)", { screening: 'accepted' }, /leads_received_at_id_idx/],
    [
      'the accepted verdict and dates',
      { screening: 'accepted', since: new Date('2026-11-01T00:00:00Z'), until: new Date('2026-12-01T00:00:00Z') },
      /leads_received_at_id_idx/,
    ],
    ['the held verdict (the review queue)', { screening: 'held' }, /leads_held_idx/],
    ['the spam verdict and dates', { screening: 'spam', since: new Date('2026-11-01T00:00:00Z'), until: new Date('2026-12-01T00:00:00Z') }, /leads_spam_idx/],
  ])('seeks a page after a cursor through an index in page order, with %s', async (_name, filter, index) => {
    const first = await reader.list(filter, 1);
    const query = jest.spyOn(dataSource, 'query');
    await reader.list(filter, 1, first.nextCursor!);
    const [sql, params] = query.mock.calls[0] as [string, unknown[]];
    query.mockRestore();
    expect(sql).toMatch(/\(received_at, id\) < \(/);
    if (kind === 'sqlite') {
      const plan = ((await dataSource.query(`EXPLAIN QUERY PLAN ${sql}`, params)) as { detail: string }[]).map((row) => row.detail).join('\n');
      expect(plan).toMatch(/^SEARCH leads USING INDEX /);
      expect(plan).toMatch(index);
      expect(plan).not.toMatch(/TEMP B-TREE/);
      return;
    }
    // A few rows make a sequential or bitmap scan and a sort the cheaper plan; with those off, the plan shows what the
    // index can do (with a million rows it is the plan chosen).
    const plan = await dataSource.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_seqscan = off');
      await manager.query('SET LOCAL enable_bitmapscan = off');
      return ((await manager.query(`EXPLAIN ${sql}`, params)) as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(index);
    expect(plan).toMatch(/Index Cond: .*ROW\(received_at, id\) < ROW\(/);
    expect(plan).not.toMatch(/Sort|Bitmap/);
  });

  it('refuses a page size outside 1 to 200 as a programming error', async () => {
    for (const limit of [0, 201, 1.5, Number.NaN]) await expect(reader.list({}, limit)).rejects.toThrow(RangeError);
  });
});
