/**
 * The worker process: `REDIS_URL=redis://127.0.0.1:6379 CHURN_RISK_WEBHOOK_SECRET=...
 * STORE_FILE=tasks.jsonl pnpm worker`. Runs the handlers of the alerts the web processes stored
 * in Redis; serves no HTTP. Prints `worker ready`. On SIGTERM (or SIGINT) it stops taking alerts,
 * lets the running ones finish, and exits 0. Killed instead (SIGKILL, OOM), its running alerts
 * are taken over by any worker once their lease expires (LOCK_MS, `leaseMs`) and a reclaim
 * (every RECLAIM_MS, `reclaimIntervalMs`) puts them back.
 */
import { createReceiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
// The handler and its store are the same for every durable back end: examples/durable-demo/src.
import { createAlertHandler } from '@churn-risk/example-durable-demo/alert-handler';
import { openIdempotentStore } from '@churn-risk/example-durable-demo/idempotent-store';
import { numberEnv, requireEnv } from './env.js';

const prefix = process.env.REDIS_PREFIX;
const queue = createRedisQueue({
  connection: requireEnv('REDIS_URL', 'the Redis URL, e.g. redis://127.0.0.1:6379'),
  leaseMs: numberEnv('LOCK_MS', 30_000),
  ...(process.env.RECLAIM_MS !== undefined && {
    reclaimIntervalMs: numberEnv('RECLAIM_MS', 30_000),
  }),
  ...(prefix !== undefined && prefix !== '' && { prefix }),
});
const receiver = createReceiver({
  secret: requireEnv('CHURN_RISK_WEBHOOK_SECRET', 'the webhook signing secret'),
  queue,
  concurrency: numberEnv('CONCURRENCY', 10),
});

const store = openIdempotentStore(process.env.STORE_FILE ?? 'follow-up-tasks.jsonl');
receiver.on('churn_risk_alert', createAlertHandler({ store, workMs: numberEnv('WORK_MS', 0) }));
receiver.onError((error, alert, context) => {
  // After its last try the alert stays in the failed set: `churn-risk failed list --redis <url>`.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`alert ${context.id} (${alert.userId}) failed after its retries: ${message}`);
});
console.log(`worker ready (pid ${process.pid})`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing running alerts`);
    receiver.close({ timeoutMs: 30_000 }).then(
      () => {
        console.log('drained');
        process.exit(0);
      },
      (error: unknown) => {
        console.error('shutdown failed:', error);
        process.exit(1);
      },
    );
  });
}
