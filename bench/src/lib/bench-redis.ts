import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';

/**
 * Runs `work` with a redis-server of its own (a free port, no persistence), which is stopped and
 * removed afterwards, and SIGKILLed should this process exit midway (Ctrl-C: lib/child.ts exits).
 */
export async function withBenchRedis<T>(work: (redis: RedisServer) => Promise<T>): Promise<T> {
  const redis = await startRedisServer();
  const killRedis = (): void => {
    try {
      redis.signal('SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killRedis);
  try {
    return await work(redis);
  } finally {
    await redis.stop();
    redis.cleanup();
    process.off('exit', killRedis);
  }
}
