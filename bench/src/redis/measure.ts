/**
 * Runs the servers of servers.ts against one redis-server started for the run, each server in its
 * own child process with its own key prefix (`lib/queue-measure.ts`).
 */
import { Queue } from 'bullmq';
import type { RedisServer } from '@churn-risk/redis/testing';
import { withBenchRedis } from '../lib/bench-redis.js';
import {
  measureQueueServers,
  type JobCount,
  type MeasureOptions,
  type QueueRound,
} from '../lib/queue-measure.js';

export type { JobCount, MeasureOptions };
/** A round; `storeCpuPerRequest` is redis-server's CPU time per answered request. */
export type RedisRound = QueueRound;

const prefixOf = (name: string): string => `bench-${name}`;

async function storedJobs(redis: RedisServer, name: string): Promise<number> {
  const queue = new Queue('alerts', {
    connection: { host: '127.0.0.1', port: redis.port },
    prefix: prefixOf(name),
  });
  try {
    return await queue.getWaitingCount();
  } finally {
    await queue.close();
  }
}

export async function measureRedisServers(
  names: readonly string[],
  options: MeasureOptions,
): Promise<{ rounds: Map<string, RedisRound[]>; jobs: Map<string, JobCount> }> {
  return withBenchRedis((redis) =>
    measureQueueServers(names, options, {
      serverFile: 'redis/server.ts',
      serverArgs: (name) => [name, redis.url, prefixOf(name)],
      pid: redis.pid,
      usesStore: (name) => !name.endsWith('-memory'),
      storedJobs: (name) => storedJobs(redis, name),
    }),
  );
}
