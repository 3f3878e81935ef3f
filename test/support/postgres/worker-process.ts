/**
 * A worker process for the Postgres tests: registers a handler and serves no HTTP. Runs on Node
 * >= 22.12 (pg-boss 12). Env: DATABASE_URL, SECRET, LOG_FILE (each handler run appends
 * `start <id> <pid>` and, once finished, `done <id> <pid>`, synchronously, so a SIGKILL loses no
 * line), WORK_MS (time a handler takes), HOLD_MS (time it takes instead for an alert whose user id
 * starts with `hold_`, so that a test can kill the process while such a handler surely runs),
 * LOCK_MS, RECLAIM_MS, CONCURRENCY. Prints `worker ready`; SIGTERM closes it (running handlers
 * finish).
 */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};
const logFile = env('LOG_FILE');
const workMs = Number(process.env.WORK_MS ?? 0);
const holdMs = Number(process.env.HOLD_MS ?? workMs);
const lockDurationMs = Number(process.env.LOCK_MS ?? 30_000);

const queue = createPostgresQueue({
  connection: env('DATABASE_URL'),
  lockDurationMs,
  reclaimIntervalMs: Number(process.env.RECLAIM_MS ?? Math.min(lockDurationMs, 30_000)),
});
const receiver = createReceiver({
  secret: env('SECRET'),
  queue,
  concurrency: Number(process.env.CONCURRENCY ?? 10),
  retries: { retries: 3, backoffMs: () => 100 },
});
receiver.on('churn_risk_alert', async (alert, context) => {
  appendFileSync(logFile, `start ${context.id} ${process.pid}\n`);
  const ms = alert.userId.startsWith('hold_') ? holdMs : workMs;
  if (ms > 0) await sleep(ms);
  appendFileSync(logFile, `done ${context.id} ${process.pid}\n`);
});
receiver.onError((error, _alert, context) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`onError ${context.id} ${process.pid} ${message}`);
});
console.log('worker ready');
process.once('SIGTERM', () => {
  void receiver.close({ timeoutMs: 30_000 }).finally(() => process.exit(0));
});
