import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';

/** Which database this run of the e2e suites uses: the `e2e-postgres` jest project sets E2E_DATABASE=postgres. */
export const ON_POSTGRES = process.env.E2E_DATABASE === 'postgres';

export type DatabaseKind = 'sqlite' | 'postgres';

/**
 * The service key of every test service on PostgreSQL (SECRETS_KEY, which it requires there): instances that share a
 * schema share it, as a deployment's must. On SQLite each test folder gets a key file of its own.
 */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 'test secrets key').toString('base64');

export interface TestDatabase {
  kind: DatabaseKind;
  /** What the service needs to use it: DATA_DIR, or DATABASE_URL and SECRETS_KEY. */
  env: Record<string, string>;
  /**
   * One statement on a connection of its own, from outside the service. SQLite is opened read-only, so that a check
   * never repairs what a crashed service left behind.
   */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh database for one suite: an empty SQLite folder, or a new PostgreSQL schema (TEST_DATABASE_URL) dropped afterwards. */
export async function freshDatabase(kind: DatabaseKind = ON_POSTGRES ? 'postgres' : 'sqlite'): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'leads-e2e-'));
    return {
      kind,
      env: { DATA_DIR: dir },
      query: async <T>(sql: string) => {
        const db = new Database(join(dir, 'leads.sqlite'), { readonly: true, fileMustExist: true });
        try {
          return db.prepare(sql).all() as T[];
        } finally {
          db.close();
        }
      },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('a PostgreSQL database needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test');
  const schema = `e2e_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const run = async <T>(url: string, sql: string): Promise<T[]> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };
  await run(base, `CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind,
    env: { DATABASE_URL: url.toString(), SECRETS_KEY: TEST_SECRETS_KEY },
    query: <T>(sql: string) => run<T>(url.toString(), sql),
    drop: async () => {
      // Two suites dropping their schemas at once can deadlock on what both depend on (pg_trgm's operator class):
      // PostgreSQL aborts one of them, which then simply goes again.
      for (let attempt = 1; ; attempt++) {
        try {
          return void (await run(base, `DROP SCHEMA ${schema} CASCADE`));
        } catch (error) {
          if ((error as { code?: string }).code !== '40P01' || attempt === 3) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
        }
      }
    },
  };
}
