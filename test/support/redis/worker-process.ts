/**
 * A worker process for the Redis tests: registers a handler and serves no HTTP. Env: REDIS_URL (or REDIS_CLUSTER_NODES),
 * PREFIX, SECRET, LOG_FILE (each handler run appends `start <id>` and, once finished,
 * `done <id>`, synchronously, so a SIGKILL loses no line), WORK_MS (time a handler takes),
 * HOLD_MS (time it takes instead for an alert whose user id starts with `hold_`, so that a test can
 * kill the process while such a handler surely runs), LOCK_MS, STALLED_MS (stalledIntervalMs),
 * MAX_STALLS, CONCURRENCY, ERROR_FILE (each onError call appends `<id> <pid> <message>`). Prints
 * `worker ready`; SIGTERM closes it (running handlers finish).
 */
import { createReceiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { Cluster } from 'ioredis';
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

/** REDIS_CLUSTER_NODES (JSON `[{ host, port }]`) connects to a Redis Cluster, else REDIS_URL. */
function connection(): string | Cluster {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  return nodes === undefined ? env('REDIS_URL') : new Cluster(JSON.parse(nodes) as never);
}

const queue = createRedisQueue({
  connection: connection(),
  prefix: env('PREFIX'),
  lockDurationMs: Number(process.env.LOCK_MS ?? 30_000),
  ...(process.env.STALLED_MS === undefined
    ? {}
    : { stalledIntervalMs: Number(process.env.STALLED_MS) }),
  ...(process.env.MAX_STALLS === undefined ? {} : { maxStalls: Number(process.env.MAX_STALLS) }),
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
const errorFile = process.env.ERROR_FILE;
if (errorFile !== undefined) {
  receiver.onError((error, _alert, context) => {
    const message = error instanceof Error ? error.message : String(error);
    appendFileSync(errorFile, `${context.id} ${process.pid} ${message}\n`);
  });
}
console.log('worker ready');
process.once('SIGTERM', () => {
  void receiver.close({ timeoutMs: 30_000 }).finally(() => process.exit(0));
});
