// `npm run migration:run`: applies pending migrations to the configured database and exits. Migrations write SQL of
// their own, so this data source needs no entities.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from './data-source.js';

const dataSource = await new DataSource(dataSourceOptions(loadConfig())).initialize();
try {
  await runMigrations(dataSource);
  const applied = await dataSource.query('SELECT name FROM migrations ORDER BY id');
  console.log(`Migrations applied: ${(applied as { name: string }[]).map((m) => m.name).join(', ')}`);
} finally {
  await dataSource.destroy();
}
