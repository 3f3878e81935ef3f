import type { Receiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RedisQueue } from '../src/index.js';
import { startRedisServer, type RedisServer } from '../src/testing.js';

/** The secret of every receiver in these tests. */
export const SECRET = 'whsec_redis_tests_5b1d';

let sequence = 0;

/** A valid alert with a fresh identity. */
export function makeAlert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    event: 'churn_risk_alert',
    userId: `user_${process.pid}_${sequence}`,
    score: 0.81,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date(Date.UTC(2026, 10, 1) + sequence * 1000).toISOString(),
    ...overrides,
  };
}

/** A signed delivery of `alert`, as `receiver.handle` takes it. */
export function deliveryOf(alert: Record<string, unknown>): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery(alert, { secret: SECRET });
  return { method: 'POST', headers, body };
}

/** What a test file opened on its Redis: closed after each test. */
export interface OpenedOnRedis {
  receivers: Receiver[];
  queues: RedisQueue[];
}

/**
 * Starts this file's own `redis-server` on a free port (stopped by pid after the file), and closes
 * the receivers and queues pushed to `open` after each test.
 */
export function useRedisServer(): { readonly url: string; open: OpenedOnRedis } {
  let redis: RedisServer | undefined;
  const open: OpenedOnRedis = { receivers: [], queues: [] };
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    redis?.cleanup();
  });
  afterEach(async () => {
    await Promise.all(open.receivers.splice(0).map((r) => r.close({ timeoutMs: 10_000 })));
    await Promise.all(open.queues.splice(0).map((q) => q.close()));
  });
  return {
    get url(): string {
      if (redis === undefined) throw new Error('the Redis server has not started');
      return redis.url;
    },
    open,
  };
}
