/**
 * A worker process for the Postgres tests (`runWorker` of ../durable-process.ts, which says what
 * the handler logs) on the Postgres queue. Env: DATABASE_URL, SECRET, LOG_FILE, WORK_MS, HOLD_MS,
 * CONCURRENCY, LOCK_MS (the lease, `leaseMs`), RECLAIM_MS. Each onError call prints
 * `onError <id> <pid> <message>` on stderr. Prints `worker ready`; SIGTERM closes it (running
 * handlers finish).
 */
import { createPostgresQueue } from '@churn-risk/postgres';
import { requiredEnv, runWorker } from '../durable-process.js';

const leaseMs = Number(process.env.LOCK_MS ?? 30_000);
runWorker(
  createPostgresQueue({
    connection: requiredEnv('DATABASE_URL'),
    leaseMs,
    reclaimIntervalMs: Number(process.env.RECLAIM_MS ?? Math.min(leaseMs, 30_000)),
  }),
  (line) => {
    console.error(`onError ${line}`);
  },
);
