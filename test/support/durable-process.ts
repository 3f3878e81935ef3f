/**
 * The bodies of the web and worker processes of the durable-queue tests (Redis, Postgres): each
 * back end's script builds its queue from the environment and hands it here.
 *
 * Both read SECRET. The worker reads LOG_FILE (each handler run appends `start <id> <pid>` and,
 * once finished, `done <id> <pid>`, synchronously, so a SIGKILL loses no line), WORK_MS (time a
 * handler takes), HOLD_MS (time it takes instead for an alert whose user id starts with `hold_`,
 * so that a test can kill the process while such a handler surely runs) and CONCURRENCY. With
 * CHECK_SIGNAL=1 the handler reads `context.signal` after its wait, as a handler does right before
 * a side effect: once its lease is lost it appends `aborted <id> <pid>` instead of `done`.
 */
import { createReceiver } from '@churn-risk/core';
import { type AlertQueue } from '@churn-risk/core/store';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A variable the process cannot run without. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

/**
 * A web process: a receiver that only accepts (`consume: false`) into `queue`, served by
 * node:http on 127.0.0.1. Prints `listening on <url>`; SIGTERM closes it.
 */
export function serveAccepting(queue: AlertQueue): void {
  const receiver = createReceiver({ secret: requiredEnv('SECRET'), queue, consume: false });
  const server = createServer((req, res) => void receiver.node(req, res));
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (typeof address === 'object' && address !== null) {
      console.log(`listening on http://127.0.0.1:${address.port}`);
    }
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void receiver.close({ timeoutMs: 10_000 }).finally(() => process.exit(0));
  });
}

/**
 * A worker process: a receiver on `queue` whose handler logs its runs to LOG_FILE, and no HTTP.
 * `onError`, when given, gets `<id> <pid> <message>` for each alert that failed its last try.
 * Prints `worker ready`; SIGTERM closes it (running handlers finish).
 */
export function runWorker(queue: AlertQueue, onError?: (line: string) => void): void {
  const logFile = requiredEnv('LOG_FILE');
  const workMs = Number(process.env.WORK_MS ?? 0);
  const holdMs = Number(process.env.HOLD_MS ?? workMs);
  const checkSignal = process.env.CHECK_SIGNAL === '1';
  const receiver = createReceiver({
    secret: requiredEnv('SECRET'),
    queue,
    concurrency: Number(process.env.CONCURRENCY ?? 10),
    retries: { retries: 3, backoffMs: () => 100 },
  });
  receiver.on('churn_risk_alert', async (alert, context) => {
    appendFileSync(logFile, `start ${context.id} ${process.pid}\n`);
    const ms = alert.userId.startsWith('hold_') ? holdMs : workMs;
    if (ms > 0) await sleep(ms);
    if (checkSignal && context.signal.aborted) {
      appendFileSync(logFile, `aborted ${context.id} ${process.pid}\n`);
      context.signal.throwIfAborted();
    }
    appendFileSync(logFile, `done ${context.id} ${process.pid}\n`);
  });
  if (onError !== undefined) {
    receiver.onError((error, _alert, context) => {
      const message = error instanceof Error ? error.message : String(error);
      onError(`${context.id} ${process.pid} ${message}`);
    });
  }
  console.log('worker ready');
  process.once('SIGTERM', () => {
    void receiver.close({ timeoutMs: 30_000 }).finally(() => process.exit(0));
  });
}
