/**
 * A worker process for the Redis tests of order per user: a receiver in order per user
 * (`order: 'per-user'`) on the Redis queue, whose handler appends `start <id> <pid>` to LOG_FILE
 * as it starts and `done <id> <pid>` once it ends, synchronously (a SIGKILL loses no line).
 * Env: REDIS_URL (or REDIS_CLUSTER_NODES), PREFIX, SECRET, LOG_FILE, WORK_MS (time a handler
 * takes), CONCURRENCY, LEASE_MS (leaseMs), RECLAIM_MS (reclaimIntervalMs). Prints `worker ready`;
 * SIGTERM closes it (running handlers finish).
 */
import { createReceiver } from '@churn-risk/core';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { requiredEnv } from '../durable-process.js';
import { redisQueueFromEnv } from './connection.js';

const logFile = requiredEnv('LOG_FILE');
const workMs = Number(process.env.WORK_MS ?? 0);
const receiver = createReceiver({
  secret: requiredEnv('SECRET'),
  order: 'per-user',
  concurrency: Number(process.env.CONCURRENCY ?? 10),
  retries: { retries: 3, backoffMs: () => 100 },
  queue: redisQueueFromEnv(),
});
receiver.on('churn_risk_alert', async (_alert, context) => {
  appendFileSync(logFile, `start ${context.id} ${process.pid}\n`);
  if (workMs > 0) await sleep(workMs);
  appendFileSync(logFile, `done ${context.id} ${process.pid}\n`);
});
console.log('worker ready');
process.once('SIGTERM', () => {
  void receiver.close({ timeoutMs: 30_000 }).finally(() => process.exit(0));
});
