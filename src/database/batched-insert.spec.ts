import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, Repository } from 'typeorm';
import { uuidv7 } from './uuid-v7.js';
import { Lead } from '../leads/lead.entity.js';
import { batchedInsert, MAX_BATCH_ROWS } from './batched-insert.js';
import { isUniqueViolation } from './database-errors.js';
import { dataSourceOptions, runMigrations } from './data-source.js';

function lead(overrides: Partial<Lead> = {}): Lead {
  return {
    id: uuidv7(),
    nome: 'Maria Souza',
    email: 'maria@example.com.br',
    telefone: null,
    telefoneE164: null,
    empresa: null,
    mensagem: null,
    origem: 'spec',
    registrationId: null,
    receivedAt: new Date('2026-11-24T10:00:00.000Z'),
    ...overrides,
  };
}

describe('batchedInsert on SQLite', () => {
  let dir: string;
  let dataSource: DataSource;
  let leads: Repository<Lead>;
  let insert: (row: Lead) => Promise<void>;
  let queries: jest.SpyInstance;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'batched-insert-'));
    dataSource = await new DataSource(dataSourceOptions({ databaseUrl: undefined, dataDir: dir })).initialize();
    await runMigrations(dataSource);
    leads = dataSource.getRepository(Lead);
    insert = batchedInsert(leads);
    queries = jest.spyOn(leads.manager, 'query');
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores the rows handed in during one turn with one statement, each promise settling once its row is stored', async () => {
    const rows = [lead({ telefone: '+55 11 98765-4321', telefoneE164: '+5511987654321' }), lead({ empresa: 'Souza & Filhos' }), lead()];
    const settled = rows.map(async (row) => {
      await insert(row);
      return leads.findOneByOrFail({ id: row.id });
    });
    const stored = await Promise.all(settled);
    expect(stored).toEqual(rows);
    expect(queries).toHaveBeenCalledTimes(1);
  });

  it('gives rows from different turns their own statements', async () => {
    await insert(lead());
    await insert(lead());
    expect(queries).toHaveBeenCalledTimes(2);
    expect(await leads.count()).toBe(2);
  });

  it(`cuts a turn of more than ${MAX_BATCH_ROWS} rows into statements of at most ${MAX_BATCH_ROWS}`, async () => {
    const rows = Array.from({ length: 2 * MAX_BATCH_ROWS + 5 }, () => lead());
    await Promise.all(rows.map(insert));
    expect(queries).toHaveBeenCalledTimes(3);
    expect(await leads.count()).toBe(rows.length);
  });

  it('fails only the row the database refuses, and stores the others of its turn', async () => {
    const existing = lead();
    await insert(existing);
    const fresh = [lead(), lead()];
    const results = await Promise.allSettled([insert(fresh[0]), insert({ ...lead(), id: existing.id }), insert(fresh[1])]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(await leads.findBy(fresh.map(({ id }) => ({ id })))).toHaveLength(2);
    expect(await leads.count()).toBe(3);
  });

  it('settles a row alone when writing it throws at once, before any query runs', async () => {
    const throwNow = (): never => {
      throw new TypeError('cannot prepare this value');
    };
    queries.mockImplementationOnce(throwNow).mockImplementationOnce(throwNow);
    const rows = [lead(), lead(), lead()];
    const results = await Promise.allSettled(rows.map(insert));
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(await leads.count()).toBe(2);
  });

  it('fails every row of a turn at once when the database cannot be reached, without retrying each', async () => {
    const unavailable = Object.assign(new Error('SQLITE_BUSY: database is locked'), { code: 'SQLITE_BUSY' });
    queries.mockRejectedValueOnce(unavailable);
    const results = await Promise.allSettled([insert(lead()), insert(lead()), insert(lead())]);
    expect(results).toEqual(Array.from({ length: 3 }, () => ({ status: 'rejected', reason: unavailable })));
    expect(queries).toHaveBeenCalledTimes(1);
    expect(await leads.count()).toBe(0);
  });
});
