import { randomBytes } from 'node:crypto';
import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, JWK } from 'jose';
import { IsNull, Repository } from 'typeorm';
import { safeError } from '../logging/safe-error.js';
import { SecretBox } from '../secrets/secret-box.js';
import { KeyPurpose, SigningKey } from './signing-key.entity.js';

/** One algorithm per purpose (RFC 8725 §3.1); RFC 9068 requires RS256 for access tokens. */
export const KEY_ALGORITHMS: Record<KeyPurpose, 'ES256' | 'RS256'> = { assertion: 'ES256', access_token: 'RS256' };
/** The longest a token of each purpose lives (seconds): a retired key stays published and usable this long, plus skew. */
export const TOKEN_LIFETIMES: Record<KeyPurpose, number> = { assertion: 3600, access_token: 900 };
export const CLOCK_SKEW_SECONDS = 60;
/** Another instance may rotate keys; this instance looks again at least this often before signing. */
const RELOAD_INTERVAL_MS = 60_000;
/** An unknown kid triggers a reload, at most this often, so forged kids cannot hammer the database. */
const UNKNOWN_KID_RELOAD_MS = 1_000;
/** After keys could not be prepared, requests get that failure for this long before one tries again. */
export const KEY_RETRY_MS = 5_000;

interface LoadedKey {
  row: SigningKey;
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

export interface PublicJwk extends JWK {
  kid: string;
  alg: string;
  use: 'sig';
}

@Injectable()
export class KeyStore implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('KeyStore');
  private keys = new Map<string, LoadedKey>();
  /** The start: the secrets key checked, then the keys' preparation begun. */
  private starting?: Promise<void>;
  private ready?: Promise<void>;
  private failure?: { error: unknown; at: number };
  private loadedAt = 0;
  private unknownKidReloadAt = 0;

  constructor(
    @InjectRepository(SigningKey) private readonly rows: Repository<SigningKey>,
    private readonly box: SecretBox,
  ) {}

  /**
   * Keys are made or loaded while the service starts answering: a new RSA key takes a few hundred milliseconds, which
   * only the first signature, verification or JWKS request needs to wait for. A failure is logged, answered to the
   * requests of the next few seconds, and then retried by the next request that needs a key. Only a wrong secrets key
   * stops the start: no later try could succeed.
   */
  onModuleInit(): Promise<void> {
    this.starting = this.checkSecretsKey().then(() => {
      this.keysReady().catch((error: unknown) => this.logger.error({ error: safeError(error) }, 'Signing keys could not be prepared; retrying on demand'));
    });
    return this.starting;
  }

  /** Every sealed private key opens with this service's key; a database that cannot be read now is left to the retries. */
  private async checkSecretsKey(): Promise<void> {
    let rows: SigningKey[];
    try {
      rows = await this.rows.find({ select: { kid: true, privateJwk: true } });
    } catch {
      return;
    }
    for (const row of rows.filter((r) => SecretBox.isSealed(r.privateJwk))) {
      try {
        this.box.open(row.privateJwk, signingKeyContext(row.kid));
      } catch (error) {
        throw new Error(
          `The signing keys in the database were sealed with another secrets key than this one (SECRETS_KEY, or secrets.key in DATA_DIR): ` +
            `start with the key they were sealed with (${(error as Error).message})`,
          { cause: error },
        );
      }
    }
  }

  /** Shutdown waits for keys or a reload still under way, so the database is not closed under them. */
  async onModuleDestroy(): Promise<void> {
    // After the start: it may still be about to begin the keys' preparation.
    await this.starting?.catch(() => undefined);
    await Promise.allSettled([this.ready, this.loading]);
  }

  private keysReady(): Promise<void> {
    // A failing database is not asked again on every request (JWKS is public): the failure stands for a while.
    if (this.failure && Date.now() - this.failure.at < KEY_RETRY_MS) return Promise.reject(this.failure.error);
    this.ready ??= this.prepareKeys().then(
      () => {
        this.failure = undefined;
      },
      (error: unknown) => {
        this.ready = undefined;
        this.failure = { error, at: Date.now() };
        throw error;
      },
    );
    return this.ready;
  }

  private async prepareKeys(): Promise<void> {
    await this.oneInstanceAtATime(async (rows) => {
      for (const purpose of Object.keys(KEY_ALGORITHMS) as KeyPurpose[]) {
        if (!(await rows.existsBy({ purpose, retiredAt: IsNull() }))) await this.create(purpose, rows);
      }
    });
    await this.load();
  }

  /**
   * On PostgreSQL, instances that start together take turns (a transaction-scoped advisory lock), so the second finds
   * the first one's keys instead of making its own. SQLite serves one instance; a transaction there would hold the one
   * connection that every other query shares.
   */
  private async oneInstanceAtATime(work: (rows: Repository<SigningKey>) => Promise<void>): Promise<void> {
    if (this.rows.manager.connection.options.type !== 'postgres') return work(this.rows);
    await this.rows.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(7426824)');
      await work(manager.getRepository(SigningKey));
    });
  }

  /** Adds a new key per purpose and makes it current; the previous keys keep verifying until their tokens expire. */
  async rotate(): Promise<string[]> {
    // Keys being prepared at start-up would otherwise land beside the rotated ones, newer, and sign instead.
    await this.starting?.catch(() => undefined);
    await this.ready?.catch(() => undefined);
    // New keys sealed with a wrong key would become current, and no instance with the right one could sign.
    await this.checkSecretsKey();
    const now = new Date();
    const created: string[] = [];
    for (const purpose of Object.keys(KEY_ALGORITHMS) as KeyPurpose[]) {
      const previous = await this.rows.find({ where: { purpose } });
      created.push(await this.create(purpose));
      for (const row of previous.filter((r) => !r.retiredAt)) await this.rows.update({ kid: row.kid }, { retiredAt: now });
    }
    // A reload that began before the new keys were written would not see them.
    await this.loading?.catch(() => undefined);
    await this.load();
    return created;
  }

  /** The key that signs new tokens of a purpose. */
  async signingKey(purpose: KeyPurpose): Promise<{ kid: string; alg: string; key: CryptoKey }> {
    await this.keysReady();
    if (Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.load();
    const current = [...this.keys.values()]
      .filter((k) => k.row.purpose === purpose && !k.row.retiredAt)
      .sort((a, b) => b.row.createdAt.getTime() - a.row.createdAt.getTime())[0];
    if (!current) throw new Error(`no current ${purpose} signing key`);
    return { kid: current.row.kid, alg: current.row.alg, key: current.privateKey };
  }

  /** The public key for a token's kid, only if it belongs to the expected purpose and may still verify. */
  async verificationKey(purpose: KeyPurpose, kid: unknown): Promise<CryptoKey | undefined> {
    if (typeof kid !== 'string' || kid.length > 64) return undefined;
    await this.keysReady();
    // A key deleted elsewhere (say, after a leak) must stop verifying here too, not only once this instance signs again.
    if (Date.now() - this.loadedAt > RELOAD_INTERVAL_MS) await this.load();
    let key = this.keys.get(kid);
    if (!key && Date.now() - this.unknownKidReloadAt > UNKNOWN_KID_RELOAD_MS) {
      this.unknownKidReloadAt = Date.now();
      await this.load();
      key = this.keys.get(kid);
    }
    return key && key.row.purpose === purpose && usable(key.row) ? key.publicKey : undefined;
  }

  /** Public members only, read from the database so that a rotation anywhere shows at once. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.keysReady();
    const rows = await this.rows.find({ order: { createdAt: 'ASC' } });
    return { keys: rows.filter(usable).map((row) => ({ ...(JSON.parse(row.publicJwk) as JWK), kid: row.kid, alg: row.alg, use: 'sig' as const })) };
  }

  private async create(purpose: KeyPurpose, rows = this.rows): Promise<string> {
    const alg = KEY_ALGORITHMS[purpose];
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const kid = `${purpose === 'assertion' ? 'as' : 'at'}_${randomBytes(12).toString('base64url')}`;
    await rows.insert({
      kid,
      purpose,
      alg,
      publicJwk: JSON.stringify(await exportJWK(publicKey)),
      privateJwk: this.box.seal(JSON.stringify(await exportJWK(privateKey)), signingKeyContext(kid)),
      createdAt: new Date(),
      retiredAt: null,
    });
    return kid;
  }

  /** Concurrent callers share one reload. */
  private loading?: Promise<void>;

  private load(): Promise<void> {
    this.loading ??= this.reload().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async reload(): Promise<void> {
    const all = await this.rows.find();
    // A retired key that can verify nothing any more is deleted, private part included.
    const expired = all.filter((row) => !usable(row)).map((row) => row.kid);
    if (expired.length) await this.rows.delete(expired);
    const rows = all.filter(usable);
    const keys = new Map<string, LoadedKey>();
    for (const row of rows) {
      const known = this.keys.get(row.kid);
      keys.set(row.kid, {
        row,
        publicKey: known?.publicKey ?? ((await importJWK(JSON.parse(row.publicJwk) as JWK, row.alg)) as CryptoKey),
        privateKey: known?.privateKey ?? ((await importJWK(JSON.parse(await this.privateJwk(row)) as JWK, row.alg)) as CryptoKey),
      });
    }
    this.keys = keys;
    this.loadedAt = Date.now();
  }

  /**
   * A row's private JWK, opened. A key stored before private keys were sealed is sealed now, in place (a migration could
   * not: migrations run without the secrets key); the condition leaves a row another instance sealed first alone.
   */
  private async privateJwk(row: SigningKey): Promise<string> {
    const context = signingKeyContext(row.kid);
    if (SecretBox.isSealed(row.privateJwk)) return this.box.open(row.privateJwk, context);
    await this.rows.update({ kid: row.kid, privateJwk: row.privateJwk }, { privateJwk: this.box.seal(row.privateJwk, context) });
    return row.privateJwk;
  }
}

/** Binds a sealed private key to its row. */
const signingKeyContext = (kid: string): string => `signing_key:${kid}`;

/** Current keys, and retired keys until every token they signed has expired. */
function usable(row: SigningKey): boolean {
  if (!row.retiredAt) return true;
  return row.retiredAt.getTime() + (TOKEN_LIFETIMES[row.purpose] + CLOCK_SKEW_SECONDS) * 1000 > Date.now();
}
