import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What ThrottlerStorage.increment returns (the package does not export the type by name). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;
import { Redis } from 'ioredis';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { safeError } from '../logging/safe-error.js';

/**
 * One fixed window per key: INCR, and start the window's expiry on the first hit; atomic in Redis. Several keys (an
 * agent's own budget and its registering address's ceiling) are counted in the same round trip; ARGV[i] is KEYS[i]'s ttl.
 */
const INCREMENT_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local hits = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[i])
    ttl = tonumber(ARGV[i])
  end
  out[#out + 1] = hits
  out[#out + 1] = ttl
end
return out`;

/** After REDIS_KEY_PREFIX, which the client puts before every key (script KEYS included). */
const KEY_PREFIX = 'ratelimit:';
const SWEEP_INTERVAL_MS = 30_000;
/**
 * Most counters kept in memory. Screening's burst rule keeps one per distinct lead body for 10 minutes, so a flood of
 * distinct leads would otherwise grow the map (and each 30 s sweep over it) without bound; past this, the oldest
 * windows go first. About 20 MB at the cap.
 */
export const MAX_MEMORY_WINDOWS = 100_000;

/** One counter to bump: its key and its window in milliseconds. */
export interface Charge {
  key: string;
  ttl: number;
}

type RedisWithScript = Redis & { rateLimitIncrement(numberOfKeys: number, ...keysThenTtls: (string | number)[]): Promise<number[]> };

interface Window {
  hits: number;
  resetAt: number;
}

/**
 * Rate-limit counters: in this process, or in Redis (REDIS_URL) so that every instance shares one quota. When Redis
 * cannot answer, counting goes on in memory (per instance) and health says degraded; when Redis is back, it is used
 * again by itself. `timeToExpire` is in milliseconds.
 */
@Injectable()
export class RateLimitStore implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly windows = new Map<string, Window>();
  private readonly sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  private redis?: Redis;
  private redisUp = false;
  private connectedOnce = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * Connects once the application's logger is in place, so that every state change is a structured log line.
   * Nest calls the hooks once per module that imports the store, hence the guard.
   */
  onModuleInit(): void {
    if (!this.config.redisUrl || this.redis) return;
    const redis = new Redis(this.config.redisUrl, {
      keyPrefix: this.config.redisKeyPrefix,
      // Fail fast instead of queueing: a request must never wait on a Redis that is gone.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 250,
      connectTimeout: 1000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.defineCommand('rateLimitIncrement', { lua: INCREMENT_SCRIPT }); // the number of keys comes first in each call
    redis.on('ready', () => this.markRedis(true));
    redis.on('error', () => undefined); // state changes are logged by markRedis; ioredis reconnects by itself
    redis.on('end', () => this.redis === redis && this.markRedis(false)); // not when we quit at shutdown
    this.redis = redis;
  }

  /** 'up' or 'down' when Redis is configured; undefined when counters live in memory by design. */
  redisState(): 'up' | 'down' | undefined {
    if (!this.redis) return undefined;
    return this.redisUp && this.redis.status === 'ready' ? 'up' : 'down';
  }

  async increment(key: string, ttl: number): Promise<ThrottlerStorageRecord> {
    return (await this.incrementAll([{ key, ttl }]))[0];
  }

  /**
   * Bumps a counter at once when counters live in this process (no REDIS_URL); undefined when Redis is configured,
   * which only incrementAll asks. For a caller that would otherwise wait on nothing (screening's burst rule).
   */
  incrementHere(key: string, ttl: number): ThrottlerStorageRecord | undefined {
    return this.redis ? undefined : this.incrementInMemory(key, ttl);
  }

  /** Bumps every counter at once (one Redis round trip), in the order given. */
  async incrementAll(charges: Charge[]): Promise<ThrottlerStorageRecord[]> {
    if (this.redis && this.redis.status === 'ready') {
      try {
        const counts = await (this.redis as RedisWithScript).rateLimitIncrement(
          charges.length,
          ...charges.map((charge) => KEY_PREFIX + charge.key),
          ...charges.map((charge) => charge.ttl),
        );
        this.markRedis(true);
        return charges.map((_, i) => record(counts[2 * i], counts[2 * i + 1]));
      } catch (error) {
        this.markRedis(false, error);
      }
    } else if (this.redis) {
      this.markRedis(false);
    }
    return charges.map((charge) => this.incrementInMemory(charge.key, charge.ttl));
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweeper);
    const redis = this.redis;
    this.redis = undefined;
    if (redis) await redis.quit().catch(() => redis.disconnect());
  }

  private incrementInMemory(key: string, ttl: number): ThrottlerStorageRecord {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + ttl };
      if (!this.windows.delete(key) && this.windows.size >= MAX_MEMORY_WINDOWS) this.evictOldest();
      this.windows.set(key, window);
    }
    window.hits++;
    return record(window.hits, window.resetAt - now);
  }

  private markRedis(up: boolean, error?: unknown): void {
    if (up === this.redisUp) return;
    this.redisUp = up;
    if (up && !this.connectedOnce) {
      this.connectedOnce = true;
      this.logger.log('Redis connected: rate limits are shared across instances');
    } else if (up) this.logger.log('Redis is back: rate limits are shared across instances again');
    else this.logger.warn({ error: error ? safeError(error) : undefined }, 'Redis unavailable: rate limits fall back to this instance');
  }

  /** A tenth of the cap, oldest first (a Map iterates in insertion order, and a new window is inserted anew). */
  private evictOldest(): void {
    let evict = MAX_MEMORY_WINDOWS / 10;
    for (const key of this.windows.keys()) {
      this.windows.delete(key);
      if (--evict === 0) return;
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

function record(totalHits: number, timeToExpire: number): ThrottlerStorageRecord {
  return { totalHits, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
}
