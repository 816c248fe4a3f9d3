import { Redis } from 'ioredis';
import type { DatabaseKind } from '../../support/database.js';
import { TcpProxy } from '../../support/tcp-proxy.js';

/** The PostgreSQL and Redis servers of the machine (CI names both); scenarios that need one skip without it. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

/** Scenarios that hold for any database run on SQLite, and on PostgreSQL too when there is one. */
export const DATABASES: DatabaseKind[] = TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A cuttable proxy in front of the server that `url` names; start() it before use. */
export function proxyFor(url: string, defaultPort: number): TcpProxy {
  const { hostname, port } = new URL(url);
  return new TcpProxy(hostname, Number(port || defaultPort));
}

/** The same URL (credentials, database, options) reaching the server through a proxy on `port`. */
export function through(url: string, port: number): string {
  const routed = new URL(url);
  routed.hostname = '127.0.0.1';
  routed.port = String(port);
  return routed.toString();
}

export interface TestRedis {
  url: string;
  /** A direct connection (not through any proxy), to look at what the service stored. */
  redis: Redis;
  close(): Promise<void>;
}

/**
 * A Redis database index of one scenario's own, emptied first: the service's rate-limit keys have a fixed prefix, so a
 * separate index is what keeps other suites' and earlier runs' counters out of this scenario's quota.
 */
export async function freshRedis(index: number): Promise<TestRedis> {
  const url = new URL(TEST_REDIS_URL!);
  url.pathname = `/${index}`;
  const redis = new Redis(url.toString(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await redis.flushdb();
  return { url: url.toString(), redis, close: async () => void (await redis.quit()) };
}
