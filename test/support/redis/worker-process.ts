/**
 * A worker process for the Redis tests (`runWorker` of ../durable-process.ts, which says what the
 * handler logs) on the Redis queue. Env: REDIS_URL (or REDIS_CLUSTER_NODES), PREFIX, SECRET,
 * LOG_FILE, WORK_MS, HOLD_MS, CONCURRENCY, LEASE_MS (leaseMs), RECLAIM_MS (reclaimIntervalMs), MAX_STALLS,
 * ERROR_FILE (each onError call appends `<id> <pid> <message>`). Prints `worker ready`; SIGTERM
 * closes it (running handlers finish).
 */
import { createRedisQueue } from '@churn-risk/redis';
import { appendFileSync } from 'node:fs';
import { requiredEnv, runWorker } from '../durable-process.js';
import { redisConnection } from './connection.js';

const errorFile = process.env.ERROR_FILE;
runWorker(
  createRedisQueue({
    connection: redisConnection(),
    prefix: requiredEnv('PREFIX'),
    leaseMs: Number(process.env.LEASE_MS ?? 30_000),
    ...(process.env.RECLAIM_MS === undefined
      ? {}
      : { reclaimIntervalMs: Number(process.env.RECLAIM_MS) }),
    ...(process.env.MAX_STALLS === undefined ? {} : { maxStalls: Number(process.env.MAX_STALLS) }),
  }),
  errorFile === undefined
    ? undefined
    : (line) => {
        appendFileSync(errorFile, `${line}\n`);
      },
);
