import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, Repository } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { KEY_RETRY_MS, KeyStore } from './key-store.service.js';
import { SigningKey } from './signing-key.entity.js';

describe('KeyStore on a new database', () => {
  let dir: string;
  let dataSource: DataSource;
  let rows: Repository<SigningKey>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keys-'));
    dataSource = await new DataSource({ ...dataSourceOptions({ databaseUrl: undefined, dataDir: dir }), entities: [SigningKey] }).initialize();
    await runMigrations(dataSource);
    rows = dataSource.getRepository(SigningKey);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not hold up start-up, and the first JWKS request waits for both keys', async () => {
    const store = new KeyStore(rows);
    store.onModuleInit();
    const { keys } = await store.jwks();
    expect(keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    expect(await rows.count()).toBe(2);
    const signing = await store.signingKey('access_token');
    expect(await store.verificationKey('access_token', signing.kid)).toBeDefined();
    await store.onModuleDestroy();
  });

  it('answers a failure to prepare the keys for a few seconds, then tries again', async () => {
    const existsBy = jest.spyOn(rows, 'existsBy').mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
    const store = new KeyStore(rows);
    await expect(store.signingKey('assertion')).rejects.toThrow('database is locked');
    await expect(store.jwks()).rejects.toThrow('database is locked');
    expect(existsBy).toHaveBeenCalledTimes(1);
    expect(await rows.count()).toBe(0);

    const later = Date.now() + KEY_RETRY_MS + 1;
    jest.spyOn(Date, 'now').mockReturnValue(later);
    await expect(store.signingKey('assertion')).resolves.toMatchObject({ alg: 'ES256' });
    expect(await rows.count()).toBe(2);
  });

  it('rotates after the keys made at start-up, so the rotated keys are the ones that sign', async () => {
    const store = new KeyStore(rows);
    store.onModuleInit();
    const [assertionKid, accessKid] = await store.rotate();
    expect((await store.signingKey('assertion')).kid).toBe(assertionKid);
    expect((await store.signingKey('access_token')).kid).toBe(accessKid);
    expect(await rows.count()).toBe(4);
    await store.onModuleDestroy();
  });
});
