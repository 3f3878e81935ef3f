import type { ReceiverOptions } from '@churn-risk/core';
import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll } from 'vitest';

/** Where the suite's receivers keep accepted alerts. */
export type QueueMode = 'memory' | 'redis';

/**
 * Redis mode of the conformance suite: one real redis-server per suite (started in `beforeAll`,
 * stopped by pid in `afterAll`), and a queue under a fresh prefix for each receiver, so cases
 * never see each other's alerts. `receiverOptions` turns the suite's options into the receiver's:
 * the in-memory queue's `maxQueue` does not apply, and `unreachable` points the queue at a port
 * where nothing listens (the Redis-mode case of `503 OVERLOADED`).
 */
export function useRedisMode(): {
  receiverOptions(
    options: Partial<ReceiverOptions>,
    unreachable?: boolean,
  ): Partial<ReceiverOptions>;
} {
  let redis: RedisServer | undefined;
  let sequence = 0;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    redis?.cleanup();
  });
  return {
    receiverOptions(options, unreachable = false) {
      if (redis === undefined) throw new Error('the Redis server has not started');
      sequence += 1;
      const queue: RedisQueue = createRedisQueue({
        connection: unreachable ? 'redis://127.0.0.1:1' : redis.url,
        prefix: `conformance-${process.pid}-${sequence}`,
        // A reachable Redis gets room for a loaded CI machine (a 503 there would be a false
        // failure); the unreachable one is refused at once either way.
        enqueueTimeoutMs: unreachable ? 500 : 5000,
        leaseMs: 5000,
      });
      const { maxQueue: _maxQueue, dedupe: _dedupe, ...rest } = options;
      return { ...rest, queue };
    },
  };
}
