import { Redis } from 'ioredis';
import {
  redactUrl,
  runFailedCli as runCli,
  failedCliHelp,
  type CliIo,
  type FailedCliBackend,
} from '@churn-risk/core/cli';
import { createRedisQueue } from '../redis-queue.js';

/** `churn-risk-redis`: the failed-set CLI of `@churn-risk/core/cli` on a Redis queue. */
export const REDIS_CLI: FailedCliBackend = {
  bin: 'churn-risk-redis',
  store: 'Redis',
  urlFlag: 'redis',
  urlEnv: 'REDIS_URL',
  schemes: ['redis', 'rediss'],
  scope: { flag: 'prefix', help: "The queue's key prefix (default churn-risk)" },
  keptBy: 'kept in Redis by @churn-risk/redis (createRedisQueue)',
  describe: redactUrl,
  open(url, prefix, timeoutMs) {
    // Our own connection, so that its errors are not logged: one line says what went wrong.
    const connection = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: timeoutMs,
    });
    connection.on('error', () => undefined);
    // The CLI accepts nothing: `health()` (bounded by 2 s) and the failed-set reads are all it asks.
    const queue = createRedisQueue({ connection, ...(prefix === undefined ? {} : { prefix }) });
    return {
      queue,
      dispose: () => {
        connection.disconnect();
      },
    };
  },
};

/** The help text of `churn-risk-redis`. */
export const HELP = failedCliHelp(REDIS_CLI);

/**
 * `churn-risk-redis failed list|retry [ID|--all] --redis <url>`: resolves with the exit code.
 * Redis is asked first whether it answers, within 5 s; if not, one line naming the URL (never
 * its password) goes to `io.err` and the code is 1.
 */
export function runFailedCli(args: readonly string[], io: CliIo): Promise<number> {
  return runCli(REDIS_CLI, args, io);
}
