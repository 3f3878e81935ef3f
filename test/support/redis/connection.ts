import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import { Cluster } from 'ioredis';
import { requiredEnv } from '../durable-process.js';

/** REDIS_CLUSTER_NODES (JSON `[{ host, port }]`) connects to a Redis Cluster, else REDIS_URL. */
export function redisConnection(): string | Cluster {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  return nodes === undefined ? requiredEnv('REDIS_URL') : new Cluster(JSON.parse(nodes) as never);
}

/**
 * The worker processes' queue: REDIS_URL or the cluster, PREFIX, LEASE_MS (default 30 s),
 * RECLAIM_MS and MAX_STALLS when set.
 */
export function redisQueueFromEnv(): RedisQueue {
  return createRedisQueue({
    connection: redisConnection(),
    prefix: requiredEnv('PREFIX'),
    leaseMs: Number(process.env.LEASE_MS ?? 30_000),
    ...(process.env.RECLAIM_MS === undefined
      ? {}
      : { reclaimIntervalMs: Number(process.env.RECLAIM_MS) }),
    ...(process.env.MAX_STALLS === undefined ? {} : { maxStalls: Number(process.env.MAX_STALLS) }),
  });
}
