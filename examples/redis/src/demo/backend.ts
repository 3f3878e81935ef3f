import type { DemoBackend } from '@churn-risk/example-durable-demo';
import { createRedisQueue } from '@churn-risk/redis';
import { fileURLToPath } from 'node:url';
import { startRedis } from './start-redis.js';

/** The demo on Redis: a throwaway `redis-server`, `REDIS_URL`, a lease that expires. */
export const redisBackend: DemoBackend = {
  id: 'redis',
  title: 'Redis',
  exampleRoot: fileURLToPath(new URL('../..', import.meta.url)),
  urlVariable: 'REDIS_URL',
  accepted: 'every one of them is in Redis',
  takeover: (lockMs) =>
    `the dead worker's alerts return when its lease expires (${lockMs} ms) and a reclaim runs`,
  async startServer() {
    const redis = await startRedis();
    // A queue handle the demo only reads counts from.
    const observer = createRedisQueue({ connection: redis.url });
    return {
      url: redis.url,
      description: `redis-server (pid ${redis.pid}) on ${redis.url}`,
      async describeQueue() {
        const counts = await observer.counts();
        return `Redis: ${counts.waiting} waiting, ${counts.active} active (the dead worker's)`;
      },
      async stop() {
        await observer.close().catch(() => undefined);
        try {
          await redis.stop();
        } finally {
          redis.cleanup();
        }
      },
      kill() {
        try {
          redis.signal('SIGKILL');
        } catch {
          // already gone
        }
        redis.cleanup();
      },
    };
  },
};
