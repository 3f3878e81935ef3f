/**
 * The worker process: `DATABASE_URL=postgres://user@127.0.0.1:5432/app
 * CHURN_RISK_WEBHOOK_SECRET=... STORE_FILE=tasks.jsonl pnpm worker`.
 * Runs the handlers of the alerts the web processes stored in Postgres; serves no HTTP. Prints
 * `worker ready`. On SIGTERM (or SIGINT) it stops taking alerts, lets the running ones finish,
 * and exits 0. Killed instead (SIGKILL, OOM), its running alerts are taken over by any worker once
 * their lease expires and a worker reclaims them (at most LOCK_MS + RECLAIM_MS).
 */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
// The handler and its store are the same for every durable back end: examples/durable-demo/src.
import { createAlertHandler } from '@churn-risk/example-durable-demo/alert-handler';
import { openIdempotentStore } from '@churn-risk/example-durable-demo/idempotent-store';
import { numberEnv, requireEnv } from './env.js';

const schema = process.env.DATABASE_SCHEMA;
const leaseMs = numberEnv('LOCK_MS', 30_000);
const queue = createPostgresQueue({
  connection: requireEnv(
    'DATABASE_URL',
    'the Postgres URL, e.g. postgres://user@127.0.0.1:5432/app',
  ),
  leaseMs,
  reclaimIntervalMs: numberEnv('RECLAIM_MS', Math.min(leaseMs, 30_000)),
  ...(schema !== undefined && schema !== '' && { schema }),
});
const receiver = createReceiver({
  secret: requireEnv('CHURN_RISK_WEBHOOK_SECRET', 'the webhook signing secret'),
  queue,
  concurrency: numberEnv('CONCURRENCY', 10),
});

const store = openIdempotentStore(process.env.STORE_FILE ?? 'follow-up-tasks.jsonl');
receiver.on('churn_risk_alert', createAlertHandler({ store, workMs: numberEnv('WORK_MS', 0) }));
receiver.onError((error, alert, context) => {
  // After its last try the alert stays in the failed set: `churn-risk-postgres failed list`.
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
