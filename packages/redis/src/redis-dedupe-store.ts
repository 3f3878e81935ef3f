import type { DedupeStore } from '@churn-risk/core/store';
import { randomUUID } from 'node:crypto';
import { openConnections, whenReady, type RedisConnection } from './connection.js';

/** Options of `createRedisDedupeStore`. */
export interface RedisDedupeStoreOptions {
  /** A `redis://` URL, ioredis options, or an ioredis instance (never closed by us). Required. */
  connection: RedisConnection;
  /** Key prefix. Default `churn-risk`; keys are `<prefix>:dedupe:<identity>`. */
  prefix?: string;
  /** Longest wait for a connection before a claim fails (answered 503). Default 2,000 ms. */
  connectTimeoutMs?: number;
}

/** The Redis dedupe store, with `close()` for the connection it opened. */
export interface RedisDedupeStore extends DedupeStore {
  claim(key: string, ttlMs: number): Promise<boolean>;
  release(key: string): Promise<void>;
  /** Closes the connection the store opened (not one that was passed in). */
  close(): Promise<void>;
}

// Deletes the key only when it still holds this store's token: a claim that expired and was taken
// by another instance is not released by us.
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The receiver's `DedupeStore` on Redis (`SET key token NX PX ttl`), for apps that keep in-process
 * processing on several instances: a redelivery that lands on another instance is a duplicate.
 * A store that fails makes the receiver answer 503, so the service retries.
 *
 * @example
 * const receiver = createReceiver({
 *   secret,
 *   dedupe: { store: createRedisDedupeStore({ connection: process.env.REDIS_URL! }) },
 * });
 */
export function createRedisDedupeStore(options: RedisDedupeStoreOptions): RedisDedupeStore {
  const prefix = options.prefix ?? 'churn-risk';
  if (typeof prefix !== 'string' || prefix === '' || /\s/.test(prefix)) {
    throw new TypeError('prefix must be a non-empty string without whitespace.');
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 1) {
    throw new TypeError('connectTimeoutMs must be a whole number of milliseconds, at least 1.');
  }
  const connections = openConnections(options.connection);
  const redis = connections.client;
  const token = randomUUID(); // this store's claims
  const keyOf = (key: string): string => `${prefix}:dedupe:${key}`;
  return {
    async claim(key, ttlMs) {
      await whenReady(redis, connectTimeoutMs);
      const set = await redis.set(keyOf(key), token, 'PX', ttlMs, 'NX');
      return set === 'OK';
    },
    async release(key) {
      await whenReady(redis, connectTimeoutMs);
      await redis.eval(RELEASE_SCRIPT, 1, keyOf(key), token);
    },
    close: () => connections.close(),
  };
}
