// `npm run keys:rotate`: adds a new signing key per purpose and makes it current on every instance.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { KeyStore } from './key-store.service.js';
import { SigningKey } from './signing-key.entity.js';

const dataSource = await new DataSource({ ...dataSourceOptions(loadConfig()), entities: [SigningKey] }).initialize();
try {
  await runMigrations(dataSource);
  const kids = await new KeyStore(dataSource.getRepository(SigningKey)).rotate();
  console.log(`New current keys: ${kids.join(', ')}. Retired keys stay published until the tokens they signed expire.`);
} finally {
  await dataSource.destroy();
}
