import { createDurableQueue, type DurableQueue } from '@churn-risk/core/store';
import type { Queue } from 'bullmq';
import type { AlertJobData } from './job-data.js';
import { resolveRedisQueueOptions, type RedisQueueOptions } from './options.js';
import { createRedisStore, type RedisAlertStore } from './redis-store.js';

/** The queue `createRedisQueue` returns: core's durable queue over the Redis store. */
export interface RedisQueue extends DurableQueue<RedisAlertStore> {
  /** The BullMQ queue, for BullMQ's own tools (read-only use). */
  readonly bullQueue: Queue<AlertJobData>;
}

/**
 * A durable, shared queue for `createReceiver({ queue })`: an alert
 * is answered `202` only once Redis has recorded its identity and stored its job, in one atomic
 * operation; every consuming process takes jobs with BullMQ's manual job API and runs core's try
 * protocol (`createDurableQueue`): a completion takes the next alert in the same round trip,
 * retries are delayed jobs, and an alert whose taker died is taken over at most `leaseMs +
 * reclaimIntervalMs` after its death. An unknown option (`lockDurationMs` is now `leaseMs`) is a
 * `TypeError` that names it.
 *
 * @example
 * const queue = createRedisQueue({ connection: process.env.REDIS_URL! });
 * const receiver = createReceiver({ secret, queue, consume: false }); // a web process
 */
export function createRedisQueue(options: RedisQueueOptions): RedisQueue {
  const resolved = resolveRedisQueueOptions(options);
  const { connection, prefix, leaseMs, dedupeTtlMs, keepFailedMs } = resolved;
  const store = createRedisStore({ connection, prefix, leaseMs, dedupeTtlMs, keepFailedMs });
  const queue = createDurableQueue(store, {
    leaseMs,
    reclaimIntervalMs: resolved.reclaimIntervalMs,
    maxStalls: resolved.maxStalls,
    dedupeTtlMs,
    enqueueTimeoutMs: resolved.enqueueTimeoutMs,
    // A take waits on BullMQ's marker once the queue is drained: no poll interval on top of it.
    pollIntervalMs: 0,
  });
  return Object.defineProperty(queue, 'bullQueue', {
    value: store.bullQueue,
    enumerable: true,
  }) as RedisQueue;
}
