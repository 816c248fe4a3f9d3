import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { DataSource, Repository } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { SecretBox } from '../secrets/secret-box.js';
import { KEY_RETRY_MS, KeyStore } from './key-store.service.js';
import { SigningKey } from './signing-key.entity.js';

describe('KeyStore on a new database', () => {
  let dir: string;
  let dataSource: DataSource;
  let rows: Repository<SigningKey>;
  const box = new SecretBox(randomBytes(32));

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
    const store = new KeyStore(rows, box);
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
    const store = new KeyStore(rows, box);
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
    const store = new KeyStore(rows, box);
    store.onModuleInit();
    const [assertionKid, accessKid] = await store.rotate();
    expect((await store.signingKey('assertion')).kid).toBe(assertionKid);
    expect((await store.signingKey('access_token')).kid).toBe(accessKid);
    expect(await rows.count()).toBe(4);
    await store.onModuleDestroy();
  });

  it('stores private keys sealed to their row, and never plain', async () => {
    const store = new KeyStore(rows, box);
    await store.onModuleInit();
    await store.rotate();
    const stored = await rows.find();
    expect(stored).toHaveLength(4);
    for (const row of stored) {
      expect(row.privateJwk).toMatch(/^enc:v1:/);
      expect(JSON.parse(box.open(row.privateJwk, `signing_key:${row.kid}`))).toMatchObject({ d: expect.any(String) });
      expect(row.publicJwk).not.toContain('"d"');
    }
    await store.onModuleDestroy();
  });

  it('seals a plain private key stored before keys were sealed, and it still signs and verifies', async () => {
    // A row as the service wrote it before: the private JWK as plain JSON.
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const plain = JSON.stringify(await exportJWK(privateKey));
    await rows.insert({
      kid: 'at_old',
      purpose: 'access_token',
      alg: 'RS256',
      publicJwk: JSON.stringify(await exportJWK(publicKey)),
      privateJwk: plain,
      createdAt: new Date(),
      retiredAt: null,
    });

    const store = new KeyStore(rows, box);
    await store.onModuleInit();
    const signing = await store.signingKey('access_token');
    expect(signing.kid).toBe('at_old');
    const row = await rows.findOneByOrFail({ kid: 'at_old' });
    expect(row.privateJwk).toMatch(/^enc:v1:/);
    expect(box.open(row.privateJwk, 'signing_key:at_old')).toBe(plain);
    expect((await rows.find()).filter((r) => !SecretBox.isSealed(r.privateJwk))).toEqual([]);

    const jwt = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: signing.alg, kid: signing.kid }).sign(signing.key);
    const verifying = await store.verificationKey('access_token', 'at_old');
    expect((await jwtVerify(jwt, verifying!)).payload.sub).toBe('x');
    // The public key that others fetch from the JWKS verifies it too.
    const published = (await store.jwks()).keys.find((key) => key.kid === 'at_old') as JWK;
    expect((await jwtVerify(jwt, await importJWK(published, 'RS256'))).payload.sub).toBe('x');

    // Another instance loading it later opens the sealed row.
    const later = new KeyStore(rows, box);
    await later.onModuleInit();
    expect((await later.signingKey('access_token')).kid).toBe('at_old');
    await store.onModuleDestroy();
    await later.onModuleDestroy();
  });

  it('refuses to start, or to rotate, with another secrets key, rather than sign with what it cannot open', async () => {
    const store = new KeyStore(rows, box);
    await store.onModuleInit();
    await store.signingKey('assertion');
    const kids = (await rows.find()).map((row) => row.kid).sort();

    const wrong = new KeyStore(rows, new SecretBox(randomBytes(32)));
    const message =
      /^The signing keys in the database were sealed with another secrets key than this one \(SECRETS_KEY, or secrets.key in DATA_DIR\): start with the key they were sealed with/;
    await expect(wrong.onModuleInit()).rejects.toThrow(message);
    await expect(wrong.rotate()).rejects.toThrow(message);
    expect((await rows.find()).map((row) => row.kid).sort()).toEqual(kids);
    await expect(wrong.signingKey('assertion')).rejects.toThrow('cannot be opened');
    await store.onModuleDestroy();
  });

  it('refuses a sealed key moved onto another row', async () => {
    const store = new KeyStore(rows, box);
    await store.onModuleInit();
    await store.signingKey('assertion');
    const [first, second] = await rows.find();
    await rows.update({ kid: second.kid }, { privateJwk: first.privateJwk });
    await expect(new KeyStore(rows, box).onModuleInit()).rejects.toThrow(`the sealed value for signing_key:${second.kid} cannot be opened`);
    await store.onModuleDestroy();
  });
});
