// `npm run keys:rotate`: adds a new signing key per purpose and makes it current on every instance.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { SecretBox } from '../secrets/secret-box.js';
import { secretsKey } from '../secrets/secrets-key.js';
import { KeyStore } from './key-store.service.js';
import { SigningKey } from './signing-key.entity.js';

const config = loadConfig();
// Before the database: without its key the service's secrets could not be sealed, and nothing should change.
const box = new SecretBox(secretsKey(config));
const dataSource = await new DataSource({ ...dataSourceOptions(config), entities: [SigningKey] }).initialize();
try {
  await runMigrations(dataSource);
  const kids = await new KeyStore(dataSource.getRepository(SigningKey), box).rotate();
  console.log(`New current keys: ${kids.join(', ')}. Retired keys stay published until the tokens they signed expire.`);
} finally {
  await dataSource.destroy();
}
