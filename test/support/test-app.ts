import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { createApp } from '../../src/app.setup.js';
import { AppConfig, loadConfig } from '../../src/config/config.js';
import { freshDatabase, TestDatabase } from './database.js';
import { GENEROUS_LIMITS } from './server-process.js';

export { freshDatabase, ON_POSTGRES, type TestDatabase } from './database.js';

export interface TestApp {
  app: NestExpressApplication;
  http: ReturnType<typeof request>;
  config: AppConfig;
  dataSource: DataSource;
  close(): Promise<void>;
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

/**
 * startTestApp with test-only controllers beside the real AppModule: for seams no production route uses yet. `imports`:
 * modules of the app whose exports the controllers need (the same instances as the app's).
 */
export async function startAppWith(controllers: Type[], env: Record<string, string> = {}, imports: Type[] = []): Promise<TestApp> {
  const database = await freshDatabase();
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://leads.test', ...GENEROUS_LIMITS, ...database.env, ...env });
  class TestRoutesModule {}
  const app = await createApp(config, { module: TestRoutesModule, imports: [AppModule.forRoot(config), ...imports], controllers });
  await app.init();
  return {
    app,
    http: request(app.getHttpServer()),
    config,
    dataSource: app.get<DataSource>(getDataSourceToken()),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

export async function countLeads(dataSource: DataSource): Promise<number> {
  const [{ n }] = await dataSource.query('SELECT COUNT(*) AS n FROM leads');
  return Number(n);
}
