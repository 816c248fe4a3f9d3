import { createHash } from 'node:crypto';
import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { uuidv7 } from '../database/uuid-v7.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { safeError } from '../logging/safe-error.js';
import { AppError } from '../problem/app-error.js';
import { SecretBox } from '../secrets/secret-box.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** How long a key is kept and replays its first answer; src/docs/stated-limits.spec.ts holds the texts that state it. */
export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** A pending key older than this belongs to a request that died; longer than any request may run. */
const PENDING_LEASE_MS = 60 * 1000;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The scope of a key whose lead was erased: the row no longer holds the caller's scope (an anonymous caller's is their
 * address) nor the key text they chose, only erasedKey() of both, so that a retry still finds it.
 */
export const ERASED_SCOPE = 'erased';

/**
 * What an erased key keeps of its scope and text: an HMAC of both under a key derived from the service's secrets key
 * (the same on every instance), so that nobody holding the table can test a dictionary of likely keys and addresses
 * against it. Hex, 64 characters.
 */
export function erasedKey(box: SecretBox, scope: string, key: string): string {
  return box.mac(`${scope}\0${key}`, 'idempotency_erased_key').toString('hex');
}

/**
 * The erased mark as the first version (issue 32) wrote it: a plain SHA-256 of scope and key. Such rows expire within
 * KEY_LIFETIME_MS of the erasure, so a retry is matched against both forms until then (decision 0029); delete this once
 * a release with erasedKey() has run for a day.
 */
export function legacyErasedKey(scope: string, key: string): string {
  return createHash('sha256').update(scope).update('\0').update(key).digest('hex');
}

export interface IdempotentWork<T> {
  /** Does the work, creating the resource with the given id. */
  execute(resourceId: string): Promise<T>;
  /** The answer for a resource that an earlier, interrupted attempt did create, if it exists. */
  recover(resourceId: string): Promise<T | undefined>;
}

/**
 * Idempotency-Key semantics (IETF httpapi draft): the first request reserves (scope, key) with the resource id it will
 * create; a retry with the same body gets the stored answer, a different body 422, a concurrent one 409.
 * No transaction spans two statements, so the same code is safe on SQLite's single connection and on PostgreSQL.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private purgeTimer?: NodeJS.Timeout;
  private reserveQuery?: string;
  private readonly createdAt: ColumnMetadata;
  private readonly expiresAt: ColumnMetadata;
  private readonly erased: ColumnMetadata;

  constructor(
    @InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>,
    private readonly box: SecretBox,
  ) {
    this.createdAt = keys.metadata.findColumnWithPropertyName('createdAt')!;
    this.expiresAt = keys.metadata.findColumnWithPropertyName('expiresAt')!;
    this.erased = keys.metadata.findColumnWithPropertyName('erased')!;
  }

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => void this.purgeExpired(), PURGE_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  async run<T>(scope: string, key: string, fingerprint: string, work: IdempotentWork<T>, attempt = 0): Promise<T> {
    const now = new Date();
    const reservation: IdempotencyKey = Object.assign(new IdempotencyKey(), {
      scope,
      key,
      fingerprint,
      leadId: uuidv7(),
      state: 'pending',
      erased: false,
      responseBody: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + KEY_LIFETIME_MS),
    });
    const reserved = await this.reserve(reservation);
    if (reserved === 'erased') throw leadErased();
    if (reserved === 'reserved') return this.complete(reservation, work);

    const existing = await this.keys.findOneBy({ scope, key });
    if (!existing || existing.expiresAt <= now) {
      if (existing) await this.keys.delete({ scope, key, leadId: existing.leadId });
      if (attempt < 2) return this.run(scope, key, fingerprint, work, attempt + 1);
      throw new AppError('idempotency_request_in_progress', 'Another request with this Idempotency-Key is being processed.');
    }
    // Erased by a version that kept the scope and key (for the rest of their 24 hours).
    if (existing.erased) throw leadErased();
    if (existing.fingerprint !== fingerprint) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different body in the last 24 hours.');
    }
    if (existing.state === 'done' && existing.responseBody) return JSON.parse(existing.responseBody) as T;

    const recovered = await work.recover(existing.leadId);
    if (recovered) return this.finish(existing, recovered);
    if (now.getTime() - existing.createdAt.getTime() > PENDING_LEASE_MS) {
      const takeover = { ...existing, leadId: uuidv7(), createdAt: now };
      const { affected } = await this.keys.update({ scope, key, leadId: existing.leadId, state: 'pending' }, { leadId: takeover.leadId, createdAt: now });
      if (affected === 1) return this.complete(takeover, work);
    }
    throw new AppError('idempotency_request_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
      headers: { 'Retry-After': '1' },
    });
  }

  /**
   * Takes the key, unless it is taken ('taken': the caller looks at the row) or an erasure left its mark for this scope
   * and key ('erased': the lead must not come back by a retry). One statement: the mark is looked for inside the INSERT,
   * since the marked row no longer holds this scope and key and so cannot make it conflict; keyed intake pays one
   * primary-key probe, not a statement of its own. Written once, not by the query builder (building it per lead cost
   * keyed intake 18%: bench/RESULTS.md).
   */
  private async reserve(row: IdempotencyKey): Promise<'reserved' | 'taken' | 'erased'> {
    const { driver } = this.keys.manager.connection;
    const postgres = driver.options.type === 'postgres';
    // PostgreSQL types the parameters of an INSERT … SELECT from the SELECT, not from the columns: cast them.
    const cast = (n: number, type: string) => (postgres ? `$${n}::${type}` : '?');
    this.reserveQuery ??= `INSERT INTO idempotency_keys (scope, key, fingerprint, lead_id, state, erased, response_body, created_at, expires_at)
      SELECT ${cast(1, 'varchar')}, ${cast(2, 'varchar')}, ${cast(3, 'varchar')}, ${cast(4, 'uuid')}, ${cast(5, 'varchar')}, ${cast(6, 'boolean')}, NULL, ${cast(7, 'timestamptz')}, ${cast(8, 'timestamptz')}
      WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = ${cast(9, 'varchar')} AND key IN (${cast(10, 'varchar')}, ${cast(11, 'varchar')}) AND expires_at > ${cast(12, 'timestamptz')})
      RETURNING lead_id`;
    const createdAt = driver.preparePersistentValue(row.createdAt, this.createdAt);
    try {
      const inserted = (await this.keys.query(this.reserveQuery, [
        row.scope,
        row.key,
        row.fingerprint,
        row.leadId,
        row.state,
        driver.preparePersistentValue(row.erased, this.erased),
        createdAt,
        driver.preparePersistentValue(row.expiresAt, this.expiresAt),
        ERASED_SCOPE,
        erasedKey(this.box, row.scope, row.key),
        legacyErasedKey(row.scope, row.key),
        createdAt,
      ])) as unknown[];
      return inserted.length ? 'reserved' : 'erased';
    } catch (error) {
      if (isUniqueViolation(error)) return 'taken';
      throw error;
    }
  }

  private async complete<T>(row: IdempotencyKey, work: IdempotentWork<T>): Promise<T> {
    let result: T;
    try {
      result = await work.execute(row.leadId);
    } catch (error) {
      // Release the key so that a retry can go ahead at once; if the database is gone the lease frees it later.
      await this.keys.delete({ scope: row.scope, key: row.key, leadId: row.leadId, state: 'pending' }).catch(() => undefined);
      throw error;
    }
    return this.finish(row, result);
  }

  private async finish<T>(row: IdempotencyKey, result: T): Promise<T> {
    try {
      await this.keys.update({ scope: row.scope, key: row.key, leadId: row.leadId }, { state: 'done', responseBody: JSON.stringify(result) });
    } catch (error) {
      // The resource exists, so the answer stands; a retry finds it through recover().
      this.logger.warn({ error: safeError(error) }, 'could not record an idempotent answer');
    }
    return result;
  }

  private async purgeExpired(): Promise<void> {
    await this.keys.delete({ expiresAt: LessThan(new Date()) }).catch((error: unknown) => this.logger.warn({ error: safeError(error) }, 'purge failed'));
  }
}

function leadErased(): AppError {
  return new AppError('lead_erased', 'The lead this Idempotency-Key created was erased at the request of the person it concerned; it was not stored again.');
}
