import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup.js';
import { AppConfig, loadConfig } from '../../src/config/config.js';

/** Which database this run of the e2e suites uses: the `e2e-postgres` jest project sets E2E_DATABASE=postgres. */
export const ON_POSTGRES = process.env.E2E_DATABASE === 'postgres';

/** Suites send hundreds of requests from one address; the rate-limit suite sets its own quotas. */
const GENEROUS_LIMITS = {
  RATE_LIMIT_ANONYMOUS: '1000000/60s',
  RATE_LIMIT_AGENT: '10000000/60s',
  RATE_LIMIT_REGISTRATION: '1000000/60s',
  RATE_LIMIT_TOKEN: '1000000/60s',
};

export interface TestApp {
  app: NestExpressApplication;
  http: ReturnType<typeof request>;
  config: AppConfig;
  dataSource: DataSource;
  close(): Promise<void>;
}

export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh database for one suite: an empty SQLite folder, or a new PostgreSQL schema dropped afterwards. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!ON_POSTGRES) {
    const dir = mkdtempSync(join(tmpdir(), 'leads-e2e-'));
    return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.TEST_DATABASE_URL!;
  const schema = `e2e_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATABASE_URL: url.toString() },
    drop: async () => {
      const client = new Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/**
 * Boots the real AppModule through the same createApp() as production, with quiet logs and a fresh database, or on
 * a given database shared with other instances (then the caller drops it).
 */
export async function startTestApp(env: Record<string, string> = {}, shared?: TestDatabase): Promise<TestApp> {
  const database = shared ?? (await freshDatabase());
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://leads.test', ...GENEROUS_LIMITS, ...database.env, ...env });
  const app = await createApp(config);
  await app.init();
  const dataSource = app.get<DataSource>(getDataSourceToken());
  return {
    app,
    http: request(app.getHttpServer()),
    config,
    dataSource,
    close: async () => {
      await app.close();
      if (!shared) await database.drop();
    },
  };
}

export async function countLeads(dataSource: DataSource): Promise<number> {
  const [{ n }] = await dataSource.query('SELECT COUNT(*) AS n FROM leads');
  return Number(n);
}
