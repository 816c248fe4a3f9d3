import 'reflect-metadata';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { BeforeInsert, Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { TcpProxy } from '../../test/support/tcp-proxy.js';
import { loadConfig } from '../config/config.js';
import { isDatabaseUnavailable, isUniqueViolation } from '../database/database-errors.js';
import { ConfigModule } from '../config/config.module.js';
import { TelemetryModule } from '../telemetry/telemetry.module.js';
import { SecretsModule } from '../secrets/secrets.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { MAX_ROWS_PER_INSERT } from '../database/insert-transaction.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { Lead } from './lead.entity.js';
import { LeadWriter, LeadTransactionPart } from './lead-writer.service.js';
import { LeadsModule } from './leads.module.js';

/** A row that another module stores with each lead, as the webhook outbox will: two columns left to their defaults. */
@Entity('lead_notes')
class LeadNote {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar', name: 'lead_id' })
  leadId: string;

  @Column({ type: 'varchar' })
  text: string;

  @Column({ type: 'varchar', default: 'new' })
  state: string;

  @Column({ type: 'integer', default: 0 })
  attempts: number;
}

/** An entity with an insert listener, which the writer's synchronous transaction could not run. Its table is never made. */
@Entity('listened_notes')
class ListenedNote {
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @BeforeInsert()
  stamp(): void {}
}

const LEAD_NOTES_TABLE = `CREATE TABLE lead_notes (
  id varchar(64) PRIMARY KEY,
  lead_id varchar(64) NOT NULL,
  text varchar(200) NOT NULL,
  state varchar(16) NOT NULL DEFAULT 'new',
  attempts integer NOT NULL DEFAULT 0
)`;

/** What the test's notes module adds for each lead; each test may change it. */
let notesFor: LeadTransactionPart<LeadNote>;
const oneNote: LeadTransactionPart<LeadNote> = (lead) => [{ id: `note-${lead.id}`, leadId: lead.id, text: `about ${lead.nome}` }];

@Injectable()
class LeadNotes implements OnModuleInit {
  constructor(private readonly writer: LeadWriter) {}

  onModuleInit(): void {
    this.writer.alsoWrite(LeadNote, (lead) => notesFor(lead));
  }
}

/** Another module, as a team extending the service would write it: its own entity, and rows in the lead's transaction. */
@Module({ imports: [LeadsModule, TypeOrmModule.forFeature([LeadNote, ListenedNote])], providers: [LeadNotes] })
class LeadNotesModule {}

function lead(overrides: Partial<Lead> = {}): Lead {
  return {
    id: uuidv7(),
    nome: 'Maria Souza',
    email: 'maria@example.com.br',
    emailFolded: 'maria@example.com.br',
    searchFolded: ' maria souza maria example com br',
    telefone: null,
    telefoneE164: null,
    empresa: null,
    mensagem: null,
    origem: 'spec',
    registrationId: null,
    clientId: null,
    legalBases: null,
    consentTextSha256: null,
    context: null,
    channel: 'api',
    receivedAt: new Date('2026-11-24T10:00:00.000Z'),
    screeningVerdict: 'accepted',
    screeningReasons: [],
    screeningDecidedBy: 'screening',
    screeningDecidedAt: new Date(),
    announcedAt: new Date(),
    ...overrides,
  };
}

const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('LeadWriter on %s', (kind) => {
  let database: TestDatabase;
  let proxy: TcpProxy | undefined;
  let dataSource: DataSource;
  let writer: LeadWriter;
  let close: () => Promise<void>;

  const storedLeads = async (): Promise<string[]> => ((await dataSource.query('SELECT id FROM leads ORDER BY id')) as { id: string }[]).map((row) => row.id);
  const storedNotes = async (): Promise<{ id: string; lead_id: string; text: string; state: string; attempts: number }[]> =>
    dataSource.query('SELECT id, lead_id, text, state, attempts FROM lead_notes ORDER BY id');

  beforeEach(async () => {
    database = await freshDatabase(kind);
    let env = database.env;
    if (kind === 'postgres') {
      // Through a proxy that a test can cut, to take the server away.
      const url = new URL(database.env.DATABASE_URL);
      proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
      await proxy.start();
      url.host = `127.0.0.1:${proxy.port}`;
      env = { DATABASE_URL: url.toString(), SECRETS_KEY: database.env.SECRETS_KEY };
    }
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const module = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), TelemetryModule, DatabaseModule.forRoot(config), SecretsModule, LeadNotesModule],
    }).compile();
    const app = await module.init();
    dataSource = app.get<DataSource>(getDataSourceToken());
    writer = app.get(LeadWriter);
    await dataSource.query(LEAD_NOTES_TABLE);
    notesFor = oneNote;
    close = async () => {
      await app.close();
      await proxy?.stop();
      await database.drop();
    };
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await close();
  });

  it('stores a lead with the rows another module adds for it, their columns left undefined at their defaults', async () => {
    notesFor = (row) => [
      { id: `a-${row.id}`, leadId: row.id, text: 'first' },
      { id: `b-${row.id}`, leadId: row.id, text: 'second', state: 'sent', attempts: 2 },
    ];
    const stored = lead({ telefone: '+55 11 98765-4321', telefoneE164: '+5511987654321', empresa: 'Souza & Filhos' });
    await writer.write(stored);
    expect(await dataSource.getRepository(Lead).findOneByOrFail({ id: stored.id })).toEqual(stored);
    expect(await storedNotes()).toEqual([
      { id: `a-${stored.id}`, lead_id: stored.id, text: 'first', state: 'new', attempts: 0 },
      { id: `b-${stored.id}`, lead_id: stored.id, text: 'second', state: 'sent', attempts: 2 },
    ]);
  });

  it('stores a lead alone when the other module adds no row for it', async () => {
    notesFor = () => [];
    const stored = lead();
    await writer.write(stored);
    expect(await storedLeads()).toEqual([stored.id]);
    expect(await storedNotes()).toEqual([]);
  });

  it('stores the leads handed in during one turn, with their rows, in one transaction, each promise settling once stored', async () => {
    const rows = [lead(), lead({ empresa: 'Souza & Filhos' }), lead()];
    const transactions = await transactionsOf(() => Promise.all(rows.map((row) => writer.write(row))));
    expect(await storedLeads()).toEqual(rows.map((row) => row.id).sort());
    expect((await storedNotes()).map((note) => note.lead_id)).toEqual(rows.map((row) => row.id).sort());
    expect(transactions).toBe(1);
  });

  it('gives leads from different turns their own transactions', async () => {
    const transactions = await transactionsOf(async () => {
      await writer.write(lead());
      await writer.write(lead());
    });
    expect(transactions).toBe(2);
    expect(await storedLeads()).toHaveLength(2);
  });

  it(`cuts a turn of more than ${MAX_ROWS_PER_INSERT} leads into transactions of at most ${MAX_ROWS_PER_INSERT}`, async () => {
    const rows = Array.from({ length: 2 * MAX_ROWS_PER_INSERT + 5 }, () => lead());
    const transactions = await transactionsOf(() => Promise.all(rows.map((row) => writer.write(row))));
    expect(transactions).toBe(3);
    expect(await storedLeads()).toHaveLength(rows.length);
    expect(await storedNotes()).toHaveLength(rows.length);
  });

  it('fails only the lead the database refuses, rolls back the rows added for it, and stores the others of its turn', async () => {
    const existing = lead();
    await writer.write(existing);
    notesFor = (row) => [{ id: `again-${row.id}`, leadId: row.id, text: 'added with the lead' }];
    const fresh = [lead(), lead()];
    const duplicate = { ...lead(), id: existing.id, nome: 'Duplicate' };
    const results = await Promise.allSettled([writer.write(fresh[0]), writer.write(duplicate), writer.write(fresh[1])]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(await storedLeads()).toEqual([existing.id, ...fresh.map((row) => row.id)].sort());
    expect((await storedNotes()).filter((note) => note.id.startsWith('again-')).map((note) => note.lead_id)).toEqual(fresh.map((row) => row.id).sort());
  });

  it('fails the lead whose added row the database refuses, and stores neither of them; the others of its turn are stored', async () => {
    const taken = lead();
    await writer.write(taken);
    const rows = [lead(), lead({ nome: 'Clashing note' }), lead()];
    // The second lead's note takes an id that is already stored.
    notesFor = (row) => [{ id: row.nome === 'Clashing note' ? `note-${taken.id}` : `note-${row.id}`, leadId: row.id, text: 'x' }];
    const results = await Promise.allSettled(rows.map((row) => writer.write(row)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(isUniqueViolation((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(await storedLeads()).toEqual([taken.id, rows[0].id, rows[2].id].sort());
    expect((await storedNotes()).map((note) => note.lead_id).sort()).toEqual([taken.id, rows[0].id, rows[2].id].sort());
  });

  it('fails the lead alone when the module adding rows throws for it', async () => {
    const rows = [lead(), lead({ nome: 'Throws' }), lead()];
    notesFor = (row) => {
      if (row.nome === 'Throws') throw new TypeError('cannot describe this lead');
      return oneNote(row);
    };
    const results = await Promise.allSettled(rows.map((row) => writer.write(row)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect(await storedLeads()).toEqual([rows[0].id, rows[2].id].sort());
    expect(await storedNotes()).toHaveLength(2);
  });

  it('fails every lead of a turn at once when the database cannot be reached, without retrying each', async () => {
    const release = await takeDatabaseAway();
    try {
      // SQLite: the INSERTs of leads tried; PostgreSQL: the connections asked for, since none can be had.
      const connections = jest.spyOn(dataSource, 'createQueryRunner');
      const attempts = kind === 'postgres' ? () => connections.mock.calls.length : leadInserts();
      const results = await Promise.allSettled([writer.write(lead()), writer.write(lead()), writer.write(lead())]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      for (const result of results) expect(isDatabaseUnavailable((result as PromiseRejectedResult).reason)).toBe(true);
      expect(attempts()).toBe(1);
    } finally {
      await release();
    }
    expect(await storedLeads()).toEqual([]);
  });

  if (kind === 'sqlite') {
    it('refuses to write inside a transaction left open on the one shared connection, rather than commit with it', async () => {
      const other = dataSource.createQueryRunner();
      await other.startTransaction();
      try {
        await expect(writer.write(lead())).rejects.toThrow('a transaction is already open on the SQLite connection');
      } finally {
        await other.rollbackTransaction();
      }
      const stored = lead();
      await writer.write(stored);
      expect(await storedLeads()).toEqual([stored.id]);
    });
  }

  it('refuses, as a module registers them, rows of an entity whose insert listeners it could not run', () => {
    expect(() => writer.alsoWrite(ListenedNote, (row) => [{ id: row.id }])).toThrow(
      'ListenedNote cannot be written in one synchronous transaction: it has insert listeners',
    );
  });

  /** How many transactions stored leads while `work` ran: one per multi-row INSERT of leads, seen from the database. */
  async function transactionsOf(work: () => Promise<unknown>): Promise<number> {
    if (kind === 'postgres') {
      const before = new Set(await storedLeads());
      await work();
      // xmin: the transaction that wrote the row. The lead's notes were written by the same one.
      const rows = (await dataSource.query('SELECT id, xmin::text AS tx FROM leads')) as { id: string; tx: string }[];
      const notes = (await dataSource.query('SELECT lead_id, xmin::text AS tx FROM lead_notes')) as { lead_id: string; tx: string }[];
      const fresh = rows.filter((row) => !before.has(row.id));
      for (const row of fresh) expect(notes.filter((note) => note.lead_id === row.id).map((note) => note.tx)).toEqual([row.tx]);
      return new Set(fresh.map((row) => row.tx)).size;
    }
    // SQLite has no transaction ids: count the INSERTs of leads the writer's connection runs.
    const inserts = leadInserts();
    await work();
    return inserts();
  }

  /** Counts the INSERTs of leads that SQLite's connection runs from now on (tried, whether or not they succeed). */
  function leadInserts(): () => number {
    const connection = (dataSource.driver as unknown as { databaseConnection: Database.Database }).databaseConnection;
    const run = jest.spyOn(Object.getPrototypeOf(connection.prepare('SELECT 1')) as Database.Statement, 'run');
    return () => run.mock.contexts.filter((statement) => (statement as Database.Statement).source.startsWith('INSERT INTO "leads"')).length;
  }

  /** SQLite: another connection holds the write lock, and this one does not wait for it. PostgreSQL: the server goes away. */
  async function takeDatabaseAway(): Promise<() => Promise<void>> {
    if (kind === 'postgres') {
      await proxy!.stop();
      return () => proxy!.start();
    }
    await dataSource.query('PRAGMA busy_timeout = 0');
    const other = new Database(join(database.env.DATA_DIR, 'leads.sqlite'));
    other.exec('BEGIN EXCLUSIVE');
    return async () => {
      other.exec('ROLLBACK');
      other.close();
    };
  }
});
