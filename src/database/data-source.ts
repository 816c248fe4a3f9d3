import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { AppConfig } from '../config/config.js';

/** How long a SQLite statement waits for a lock another process holds (busy_timeout). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** The SQLite database file, under DATA_DIR. */
export const sqliteFile = (config: Pick<AppConfig, 'dataDir'>): string => join(config.dataDir, 'leads.sqlite');

/**
 * SQLite under DATA_DIR unless DATABASE_URL names a PostgreSQL server. Schema changes only ever come from MIGRATIONS.
 * No entities: each module registers its own (TypeOrmModule.forFeature, gathered by autoLoadEntities in
 * database.module.ts), and a maintenance command names the few it touches.
 */
export function dataSourceOptions(config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>): DataSourceOptions {
  const common = { migrations: MIGRATIONS, synchronize: false, migrationsRun: false, logging: false } as const;
  if (config.databaseUrl) {
    return {
      ...common,
      type: 'postgres',
      url: config.databaseUrl,
      // Bounded waits: with the server gone a request fails fast with 503 instead of hanging.
      extra: { max: 10, connectionTimeoutMillis: 3000, query_timeout: 10000, statement_timeout: 10000 },
    };
  }
  mkdirSync(config.dataDir, { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: sqliteFile(config),
    enableWAL: true,
    // NORMAL in WAL mode keeps every committed row across a process crash (kill -9); only an OS crash can lose the last commits.
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      db.pragma('synchronous = NORMAL');
      db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      // Deleted and rewritten bytes are zeroed, on every transaction, not only the erasure's: intake's page splits and
      // updates leave copies of rows in free space that an erasure's deletes never reach (with it on only around the
      // erasure, the scrub tests found the person in 4 interior pages; decision 0029, "What an erasure leaves on disk").
      db.pragma('secure_delete = ON');
      // Reads through a memory map, without a system call per page: a search reads leads scattered over the file (at a
      // million leads, three times faster than through SQLite's 2 MB page cache; bench/RESULTS.md, "Inbox").
      db.pragma('mmap_size = 4294967296');
    },
  };
}

/** Applies pending migrations; on PostgreSQL an advisory lock keeps instances that start together from racing. */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(7426823)');
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await runner.query('SELECT pg_advisory_unlock(7426823)').catch(() => undefined);
    await runner.release();
  }
}
