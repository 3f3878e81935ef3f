import { describe, expect, it } from 'vitest';
import { createRedisQueue, createRedisStore, type RedisQueueOptions } from '../src/index.js';

// Every case is refused before a connection is opened: nothing listens on this URL.
const connection = 'redis://127.0.0.1:1';

/** `options` as JavaScript code (or a stale cast) could pass them. */
const untyped = (options: Record<string, unknown>): RedisQueueOptions => ({
  connection,
  ...options,
});

describe('the options of createRedisQueue and createRedisStore', () => {
  it('names an unknown option and the one it probably meant', () => {
    expect(() => createRedisQueue(untyped({ lockDurationMs: 5000 }))).toThrow(
      /does not know the option "lockDurationMs" \(the lease is called leaseMs\)/,
    );
    expect(() => createRedisQueue(untyped({ stalledIntervalMs: 500 }))).toThrow(
      /"stalledIntervalMs" \(the reclaim interval is called reclaimIntervalMs\)/,
    );
    expect(() => createRedisQueue(untyped({ leaseMS: 5000 }))).toThrow(/did you mean leaseMs\?/);
    expect(() => createRedisStore(untyped({ lockDurationMs: 5000 }))).toThrow(TypeError);
    // Core's one map of old names (RENAMED_OPTIONS), on both.
    for (const create of [createRedisQueue, createRedisStore]) {
      expect(() => create(untyped({ ttlMs: 5000 }))).toThrow(
        /"ttlMs" \(the de-duplication TTL is the option dedupeTtlMs\)/,
      );
    }
  });

  it('says, without a connection (an environment variable unset at build), to make the queue on the first request', () => {
    for (const create of [createRedisQueue, createRedisStore]) {
      expect(() => create({ connection: process.env.CHURN_RISK_UNSET_REDIS_URL! })).toThrow(
        /connection is required.*\(got undefined\).*REDIS_URL.*`next build`.*make the queue on the first request.*not at module load/,
      );
    }
  });

  it('refuses an option Redis cannot honour, saying why', () => {
    expect(() => createRedisQueue(untyped({ pollIntervalMs: 100 }))).toThrow(
      /"pollIntervalMs" \(a Redis take waits on BullMQ's marker/,
    );
  });

  it("refuses core's options on the store, which cannot apply them", () => {
    for (const key of ['reclaimIntervalMs', 'maxStalls', 'enqueueTimeoutMs']) {
      expect(() => createRedisStore(untyped({ [key]: 1000 }))).toThrow(
        new RegExp(`"${key}" \\(an option of createRedisQueue`),
      );
    }
  });

  it('refuses values that are not whole numbers of milliseconds', () => {
    for (const key of ['leaseMs', 'reclaimIntervalMs', 'enqueueTimeoutMs', 'dedupeTtlMs']) {
      expect(() => createRedisQueue(untyped({ [key]: 0 })), key).toThrow(TypeError);
      expect(() => createRedisQueue(untyped({ [key]: 1.5 })), key).toThrow(key);
    }
    expect(() => createRedisQueue(untyped({ maxStalls: -1 }))).toThrow(/maxStalls/);
  });
});
