/**
 * A worker process for the Redis tests (`runWorker` of ../durable-process.ts, which says what the
 * handler logs) on the Redis queue. Env: REDIS_URL (or REDIS_CLUSTER_NODES), PREFIX, SECRET,
 * LOG_FILE, WORK_MS, HOLD_MS, CONCURRENCY, LEASE_MS (leaseMs), RECLAIM_MS (reclaimIntervalMs), MAX_STALLS,
 * ERROR_FILE (each onError call appends `<id> <pid> <message>`). Prints `worker ready`; SIGTERM
 * closes it (running handlers finish).
 */
import { appendFileSync } from 'node:fs';
import { runWorker } from '../durable-process.js';
import { redisQueueFromEnv } from './connection.js';

const errorFile = process.env.ERROR_FILE;
runWorker(
  redisQueueFromEnv(),
  errorFile === undefined
    ? undefined
    : (line) => {
        appendFileSync(errorFile, `${line}\n`);
      },
);
