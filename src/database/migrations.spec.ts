import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { freshDatabase, TestDatabase } from '../../test/support/database.js';
import { AppConfig, loadConfig } from '../config/config.js';
import { Lead } from '../leads/lead.entity.js';
import { foldEmail } from '../leads/lead-rules.js';
import { dataSourceOptions, runMigrations } from './data-source.js';
import { uuidv7 } from './uuid-v7.js';

describe('the migration list (migrations/index.ts)', () => {
  it('names every migration file of migrations/, oldest first, so that none is written and never run', () => {
    const files = readdirSync('migrations')
      .filter((name) => /^\d+-.+\.ts$/.test(name))
      .sort();
    const timestamps = files.map((name) => name.slice(0, name.indexOf('-')));
    expect(files.length).toBeGreaterThan(0);
    expect(MIGRATIONS.map((migration) => migration.name.slice(-timestamps[0].length))).toEqual(timestamps);
  });
});

const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('1764300000000-lead-read-columns on %s, over leads stored before it', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  const at = MIGRATIONS.findIndex((migration) => migration.name.endsWith('1764300000000'));

  beforeAll(async () => {
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) } as DataSourceOptions).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it('folds every stored e-mail as the service does, Unicode included, across batches', async () => {
    await runMigrations(dataSource);
    const emails = [
      'Maria@Example.COM',
      'ÉLODIE@Example.com',
      'İlkay@örnek.com.tr',
      'ΣΟΦΙΑ@Example.gr',
      ...Array.from({ length: 1203 }, (_, i) => `JOÃO.${i}@Example.com`),
      ...Array.from({ length: 30 }, (_, i) => `plain.${i}@example.com`),
    ];
    const values = emails.map((email) => [uuidv7(), email]);
    const sql = (index: number) => (kind === 'postgres' ? `$${index}` : '?');
    for (let start = 0; start < values.length; start += 100) {
      const chunk = values.slice(start, start + 100);
      await dataSource.query(
        `INSERT INTO leads (id, nome, email, received_at) VALUES ${chunk.map((_, i) => `(${sql(3 * i + 1)}, 'x', ${sql(3 * i + 2)}, ${sql(3 * i + 3)})`).join(', ')}`,
        chunk.flatMap(([id, email]) => [id, email, kind === 'postgres' ? new Date() : '2026-11-20 10:00:00.000']),
      );
    }
    await dataSource.destroy();
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);
    const rows = (await dataSource.query('SELECT email, email_folded, channel, client_id FROM leads')) as Record<string, string | null>[];
    expect(rows).toHaveLength(emails.length);
    const wrong = rows.filter((row) => row.email_folded !== foldEmail(row.email!) || row.channel !== 'api' || row.client_id !== null);
    expect(wrong).toEqual([]);
    expect(rows.find((row) => row.email === 'ΣΟΦΙΑ@Example.gr')?.email_folded).toBe('σοφια@example.gr');
  });
});

describe.each(kinds)('1764850000000-compatibility-addresses on %s, over leads stored before it', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  const at = MIGRATIONS.findIndex((migration) => migration.name.endsWith('1764850000000'));

  beforeAll(async () => {
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) } as DataSourceOptions).initialize();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await dataSource?.destroy();
    await database.drop();
  });

  it('counts the leads whose address holds one, in its log line, keeps every address, and folds those to themselves', async () => {
    await runMigrations(dataSource);
    // As the service stored them before: NFC, domain lower-cased, email_folded lower-cased in full.
    const emails = [
      '\u03F4eo@exemplo.gr',
      '\uFF2Bate@exemplo.com.br',
      'ana\u00B2@exemplo.com.br',
      'θeo@exemplo.gr',
      'kate@exemplo.com.br',
      'JOÃO@exemplo.com.br',
      ...Array.from({ length: 600 }, (_, i) => `jo\u00E3o.${i}@exemplo.com.br`),
      ...Array.from({ length: 2 }, (_, i) => `\uFF4A${i}@exemplo.com.br`),
    ];
    const sql = (index: number) => (kind === 'postgres' ? `$${index}` : '?');
    const rows = emails.map((email) => [uuidv7(), email, email.normalize('NFC').toLowerCase()]);
    for (let start = 0; start < rows.length; start += 100) {
      const chunk = rows.slice(start, start + 100);
      await dataSource.query(
        `INSERT INTO leads (id, nome, email, email_folded, received_at) VALUES ${chunk.map((_, i) => `(${sql(4 * i + 1)}, 'x', ${sql(4 * i + 2)}, ${sql(4 * i + 3)}, ${sql(4 * i + 4)})`).join(', ')}`,
        chunk.flatMap((row) => [...row, kind === 'postgres' ? new Date() : '2026-11-20 10:00:00.000']),
      );
    }
    await dataSource.destroy();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);
    expect(warn.mock.calls.map(([message]) => String(message))).toEqual([
      expect.stringMatching(/^5 stored leads have an e-mail address with a compatibility character/),
    ]);
    expect(JSON.stringify(warn.mock.calls)).not.toContain('exemplo');
    const stored = (await dataSource.query('SELECT email, email_folded FROM leads')) as { email: string; email_folded: string }[];
    expect(stored.map((row) => row.email).sort()).toEqual([...emails].sort());
    expect(stored.filter((row) => row.email_folded !== foldEmail(row.email))).toEqual([]);
    const folded = Object.fromEntries(stored.map((row) => [row.email, row.email_folded]));
    expect([folded['\u03F4eo@exemplo.gr'], folded['θeo@exemplo.gr'], folded['\uFF2Bate@exemplo.com.br']]).toEqual([
      '\u03F4eo@exemplo.gr',
      'θeo@exemplo.gr',
      '\uFF2Bate@exemplo.com.br',
    ]);
  });
});

describe.each(kinds)('1764960000000-registration-addresses on %s, over registrations stored before it', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  const at = MIGRATIONS.findIndex((migration) => migration.name.endsWith('1764960000000'));
  const sql = (text: string) => (kind === 'postgres' ? text : text.replace(/\$\d+/g, '?'));
  /** As the service stored timestamps before: Date on PostgreSQL, TypeORM's UTC text on SQLite. */
  const time = (ms: number) => (kind === 'postgres' ? new Date(ms) : new Date(ms).toISOString().replace('T', ' ').replace('Z', ''));
  const created = Date.parse('2026-11-20T10:00:00.000Z');
  const HOUR = 3_600_000;

  beforeAll(async () => {
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) } as DataSourceOptions).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it('indexes every address as the service folds it, across batches, and gives each registration the expiry of the last thing it was given', async () => {
    await runMigrations(dataSource);
    const registrations: [id: string, contacts: string[] | null, email: string | null][] = [
      ['reg_greek', ['ΣΟΦΙΑ@Exemplo.gr', ' σοφια@exemplo.gr', 'Ops@Exemplo.gr'], 'Σοφια@exemplo.gr'],
      ['reg_none', null, null],
      ['reg_refreshed', null, 'İlkay@örnek.com.tr'],
      ['reg_short', null, null],
      ...Array.from({ length: 1203 }, (_, i): [string, string[], null] => [`reg_${String(i).padStart(4, '0')}`, [`JOÃO.${i}@Example.com`], null]),
    ];
    for (const [id, contacts, email] of registrations) {
      await dataSource.query(
        sql(`INSERT INTO agent_registrations (id, type, contacts, email, scopes, claim_token_hash, claim_token_expires_at, created_at)
          VALUES ($1, 'anonymous', $2, $3, 'leads:write', 'h', $4, $5)`),
        [id, contacts && JSON.stringify(contacts), email, time(created + 24 * HOUR), time(created)],
      );
    }
    // A family rotated 40 days after the registration: its last token expires 30 days later, its last assertion
    // (issued at that rotation) 4,620 seconds after it.
    const rotated = created + 40 * 24 * HOUR;
    // With one-second refresh tokens, the last assertion outlives the last token.
    for (const [hash, registration, createdAt, lifetime] of [
      ['t1', 'reg_refreshed', created, 30 * 24 * HOUR],
      ['t2', 'reg_refreshed', rotated, 30 * 24 * HOUR],
      ['t3', 'reg_short', rotated, 1000],
    ] as const) {
      await dataSource.query(sql('INSERT INTO agent_refresh_tokens (token_hash, registration_id, created_at, expires_at) VALUES ($1, $2, $3, $4)'), [
        hash,
        registration,
        time(createdAt),
        time(createdAt + lifetime),
      ]);
    }
    await dataSource.destroy();
    dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    await runMigrations(dataSource);

    const addresses = (await dataSource.query('SELECT registration_id, email_folded FROM agent_registration_addresses')) as Record<string, string>[];
    const byRegistration = new Map<string, string[]>();
    for (const row of addresses) byRegistration.set(row.registration_id, [...(byRegistration.get(row.registration_id) ?? []), row.email_folded]);
    expect(byRegistration.get('reg_greek')?.sort()).toEqual(['ops@exemplo.gr', 'σοφια@exemplo.gr']);
    expect(byRegistration.has('reg_none')).toBe(false);
    expect(byRegistration.get('reg_refreshed')).toEqual([foldEmail('İlkay@örnek.com.tr')]);
    expect(addresses).toHaveLength(2 + 1 + 1203);
    const wrong = registrations
      .filter(([id]) => id.startsWith('reg_0') || id.startsWith('reg_1'))
      .filter(([id, contacts]) => JSON.stringify(byRegistration.get(id)) !== JSON.stringify([foldEmail(contacts![0])]));
    expect(wrong).toEqual([]);

    const expiries = (await dataSource.query(sql('SELECT id, expires_at FROM agent_registrations WHERE id IN ($1, $2, $3)'), [
      'reg_none',
      'reg_refreshed',
      'reg_short',
    ])) as { id: string; expires_at: Date | string }[];
    const expiry = (id: string) => {
      const value = expiries.find((row) => row.id === id)!.expires_at;
      return value instanceof Date ? value.getTime() : Date.parse(`${value.replace(' ', 'T')}Z`);
    };
    // Never refreshed: the claim token (24 h) outlives its first assertion.
    expect(expiry('reg_none')).toBe(created + 24 * HOUR);
    expect(expiry('reg_refreshed')).toBe(rotated + 30 * 24 * HOUR);
    expect(expiry('reg_short')).toBe(rotated + 4620 * 1000);
    expect(Number((await dataSource.query('SELECT COUNT(*) AS n FROM agent_registrations WHERE expires_at IS NULL'))[0].n)).toBe(0);
  });
});

describe.each(kinds)('1765100000000-lead-screening on %s, over leads stored before it', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let config: AppConfig;
  const at = MIGRATIONS.findIndex((migration) => migration.name.endsWith('1765100000000'));
  const received = '2026-11-20T10:00:00.123Z';
  const id = uuidv7();

  beforeAll(async () => {
    database = await freshDatabase(kind);
    config = loadConfig({ LOG_LEVEL: 'silent', ...database.env });
    dataSource = await new DataSource({ ...dataSourceOptions(config), migrations: MIGRATIONS.slice(0, at) } as DataSourceOptions).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it('makes every earlier lead accepted by screening when it was received, and announced then (they were all delivered)', async () => {
    await runMigrations(dataSource);
    await dataSource.query(
      kind === 'postgres'
        ? `INSERT INTO leads (id, nome, email, email_folded, channel, received_at) VALUES ($1, 'x', 'a@b.co', 'a@b.co', 'api', $2)`
        : `INSERT INTO leads (id, nome, email, email_folded, channel, received_at) VALUES (?, 'x', 'a@b.co', 'a@b.co', 'api', ?)`,
      [id, kind === 'postgres' ? new Date(received) : received.replace('T', ' ').replace('Z', '')],
    );
    await dataSource.destroy();
    dataSource = await new DataSource({ ...dataSourceOptions(config), entities: [Lead] } as DataSourceOptions).initialize();
    await runMigrations(dataSource);

    const lead = await dataSource.getRepository(Lead).findOneByOrFail({ id });
    expect(lead).toMatchObject({ screeningVerdict: 'accepted', screeningReasons: [], screeningDecidedBy: 'screening' });
    expect(lead.screeningDecidedAt.toISOString()).toBe(received);
    expect(lead.announcedAt?.toISOString()).toBe(received);
  });
});
