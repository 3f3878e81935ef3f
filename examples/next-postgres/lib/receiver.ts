import { createReceiver, type AlertContext, type Logger, type Receiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { createRedisQueue } from '@churn-risk/redis';
import { createRunLog, type RunLog } from './run-log';
import { readSettings, type Settings } from './settings';

/** Warnings (a lost lease) and errors to stderr, one line each; debug and info are dropped. */
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (_fields, message) => {
    console.warn(message);
  },
  error: (_fields, message) => {
    console.error(message);
  },
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The example's stand-in for real work, chosen by the alert's `userId` so that one app shows
 * every case: `slow_…` takes `CHURN_RISK_EXAMPLE_SLOW_MS` (5 s), `flaky_…` fails its first two
 * tries, `broken_…` fails every try; any other user is handled at once.
 */
async function work(userId: string, context: AlertContext, settings: Settings): Promise<void> {
  if (userId.startsWith('slow_')) await sleep(settings.slowMs);
  if (userId.startsWith('flaky_') && context.attempt < 2) {
    throw new Error(`flaky: try ${String(context.attempt)} fails`);
  }
  if (userId.startsWith('broken_')) throw new Error('broken: every try fails');
}

/** Creates the receiver: the queue the settings name, invocation mode, a handler that logs its runs. */
function createExampleReceiver(settings: Settings, runs: RunLog): Receiver {
  const queue =
    settings.queue === 'postgres'
      ? createPostgresQueue({ connection: settings.url, leaseMs: settings.leaseMs })
      : createRedisQueue({ connection: settings.url, leaseMs: settings.leaseMs });
  const receiver = createReceiver({
    secret: settings.secret,
    queue,
    // After each 202, inside after(): run the due alerts (this one first) for keepAliveBudgetMs.
    consume: 'invocation',
    keepAliveBudgetMs: settings.keepAliveBudgetMs,
    logger,
  });
  const { instance } = settings;
  receiver.on('churn_risk_alert', async (alert, context) => {
    const { id: alertId, attempt, stalls } = context;
    // stalls > 0: a server died or froze mid-run before; an earlier run may have done part of it.
    const run = await runs.start({ alertId, kind: 'handler', instance, attempt, stalls });
    try {
      await work(alert.userId, context, settings);
    } catch (error) {
      await runs.finish(run, 'failed');
      throw error;
    }
    // The lease may be gone (this server froze past it, or the store refused a renewal): another
    // server may be running the alert now. Check before the side effect, so it happens once.
    if (context.signal.aborted) {
      await runs.finish(run, 'lease-lost');
      context.signal.throwIfAborted();
    }
    await runs.finish(run, 'done'); // the side effect
  });
  receiver.onError(async (error, _alert, context) => {
    const { id: alertId, attempt, stalls } = context;
    console.error(`[churn-risk] ${alertId} failed after its last try:`, error);
    await runs.reported({ alertId, instance, attempt, stalls });
  });
  return receiver;
}

interface App {
  receiver: Receiver;
  runs: RunLog;
  settings: Settings;
}

const APP_KEY = Symbol.for('churn-risk.example-next-postgres.app');

/**
 * The receiver, its run log and settings, made on first use and kept on `globalThis`: Next bundles
 * each route on its own, and both routes must share one queue (one connection pool) per process.
 */
export function exampleApp(): App {
  const holder = globalThis as typeof globalThis & Record<symbol, App | undefined>;
  if (holder[APP_KEY] === undefined) {
    const settings = readSettings();
    const runs = createRunLog(settings.queue, settings.url);
    holder[APP_KEY] = { receiver: createExampleReceiver(settings, runs), runs, settings };
  }
  return holder[APP_KEY];
}
