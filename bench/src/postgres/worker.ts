/**
 * Child process entry, on Node >= 22.12: `worker.ts <postgres|redis> <store URL> <schema or
 * prefix> [holdMs]`, a consuming process (`createReceiver` with `createPostgresQueue` or
 * `createRedisQueue` and their defaults, concurrency 10) whose handler tells the parent, first
 * thing, `{ userId, at, pid }` (`at`: `machineClock()`, the machine's
 * monotonic clock in ms, one clock for every process of the machine), then
 * returns, or waits `holdMs` (a handler to be killed in). Sends `{ ready: true }` once started.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createReceiver } from '@churn-risk/core';
import { type AlertQueue } from '@churn-risk/core/store';
import { createPostgresQueue } from '@churn-risk/postgres';
import { createRedisQueue } from '@churn-risk/redis';
import { SECRET } from '../lib/alert.js';
import { answerCpuRequests } from '../lib/child-cpu.js';
import { tellParent } from '../lib/child.js';
import { machineClock } from '../lib/clock.js';

const [mode = '', url = '', namespace = '', hold = '0'] = process.argv.slice(2);
const holdMs = Number(hold);

function queueOf(): AlertQueue {
  if (mode === 'postgres') return createPostgresQueue({ connection: url, schema: namespace });
  if (mode === 'redis') return createRedisQueue({ connection: url, prefix: namespace });
  throw new Error(`unknown mode "${mode}"`);
}

const receiver = createReceiver({ secret: SECRET, queue: queueOf(), concurrency: 10 });
receiver.on('churn_risk_alert', async (alert) => {
  tellParent({
    userId: alert.userId,
    at: machineClock(),
    pid: process.pid,
  });
  if (holdMs > 0) await sleep(holdMs);
});
process.on('disconnect', () => process.exit(0));
answerCpuRequests();
tellParent({ ready: true });
