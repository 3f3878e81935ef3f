/**
 * A worker process for order-per-user.test.ts: `createPostgresQueue` and a receiver in order per
 * user. Env: DATABASE_URL, SCHEMA, SECRET, LOG_FILE, LEASE_MS, RECLAIM_MS, HOLD_USER, HOLD_MS.
 * Each handler run appends `start <id> <pid>` to LOG_FILE first (synchronously, so a SIGKILL loses
 * no line) and `done <id> <pid>` once finished; a run for HOLD_USER takes HOLD_MS (long enough for
 * the test to kill this process while it holds that user), any other run no time. Prints
 * `worker ready`; SIGTERM closes it.
 */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

const logFile = env('LOG_FILE');
const holdUser = env('HOLD_USER');
const holdMs = Number(env('HOLD_MS'));
const receiver = createReceiver({
  secret: env('SECRET'),
  order: 'per-user',
  concurrency: 4,
  queue: createPostgresQueue({
    connection: env('DATABASE_URL'),
    schema: env('SCHEMA'),
    leaseMs: Number(env('LEASE_MS')),
    reclaimIntervalMs: Number(env('RECLAIM_MS')),
    pollIntervalMs: 100,
  }),
});
receiver.on('churn_risk_alert', async (alert, context) => {
  appendFileSync(logFile, `start ${context.id} ${String(process.pid)}\n`);
  if (alert.userId === holdUser) await sleep(holdMs);
  appendFileSync(logFile, `done ${context.id} ${String(process.pid)}\n`);
});
console.log('worker ready');
process.once('SIGTERM', () => {
  void receiver.close({ timeoutMs: 10_000 }).finally(() => process.exit(0));
});
