import { NonRetryableError } from '@churn-risk/core';
import { post } from './fixture-recorder.test-util.js';
import {
  createQueueWorker,
  type D1Database,
  type D1Statement,
  type QueueProducer,
} from './index.js';

/**
 * The queue mode worker that queue-mode.workerd.test.ts bundles and runs in workerd, on
 * miniflare's Queues and D1, with failures chosen by the alert's user id:
 * - `d1out_`: D1 refuses the alert's first two writes to the failed store;
 * - `qout_`: the Queue refuses the alert's first four sends made with a delay (the consumer's:
 *   a retry, or the alert sent again);
 * - the handler fails its first two runs of an alert (`d1out_`: with a `NonRetryableError`, so
 *   that each run is the last try), then succeeds; with `broken` in the id, it always fails.
 * The handler reports each run to the recorder (`/run/<userId>`), `onError` each call
 * (`/error/<userId>`).
 */
interface Env {
  CHURN_RISK_WEBHOOK_SECRET: string;
  RECORDER_URL: string;
  ALERTS: QueueProducer;
  DB: D1Database;
}

const counts = new Map<string, number>();
/** Counts one more `key`; true while it has been counted at most `times` times. */
function within(key: string, times: number): boolean {
  const count = (counts.get(key) ?? 0) + 1;
  counts.set(key, count);
  return count <= times;
}

/** A statement whose `run` is refused while `refuses(values)` says so. */
class RefusingStatement implements D1Statement {
  constructor(
    readonly inner: D1Statement,
    readonly refuses: (values: unknown[]) => boolean,
    readonly values: unknown[] = [],
  ) {}

  bind(...values: unknown[]): D1Statement {
    return new RefusingStatement(this.inner.bind(...values), this.refuses, values);
  }

  first<T = Record<string, unknown>>(): Promise<T | null> {
    return this.inner.first<T>();
  }

  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- D1's own signature
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }> {
    return this.inner.all<T>();
  }

  run(): Promise<unknown> {
    if (!this.refuses(this.values)) return this.inner.run();
    return Promise.reject(new Error('D1_ERROR: D1 is overloaded'));
  }
}

function refusingD1(db: D1Database): D1Database {
  return {
    prepare(query) {
      const failedWrite = query.startsWith('INSERT INTO churn_risk_failed');
      return new RefusingStatement(db.prepare(query), (values) => {
        const alertId = String(values[1]);
        return failedWrite && alertId.startsWith('d1out_') && within(`d1:${alertId}`, 2);
      });
    },
    batch: (statements) =>
      db.batch(statements.map((s) => (s instanceof RefusingStatement ? s.inner : s))),
  };
}

function refusingQueue(queue: QueueProducer): QueueProducer {
  return {
    send(body, options) {
      const userId = (body as { entry?: { alert?: { userId?: string } } }).entry?.alert?.userId;
      const refused =
        options?.delaySeconds !== undefined &&
        userId?.startsWith('qout_') === true &&
        within(`queue:${userId}`, 4);
      return refused
        ? Promise.reject(new Error('Queue send failed: unavailable'))
        : queue.send(body, options);
    },
  };
}

export default createQueueWorker<Env>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  queue: (env) => refusingQueue(env.ALERTS),
  dedupe: (env) => refusingD1(env.DB),
  deadLetterQueue: 'alerts-dlq',
  retries: { retries: 3, backoffMs: () => 10 },
  setup: (receiver, env) => {
    receiver.on('churn_risk_alert', async (alert, { attempt }) => {
      await post(`${env.RECORDER_URL}/run/${alert.userId}`, { attempt });
      if (alert.userId.includes('broken') || within(`run:${alert.userId}`, 2)) {
        const Failure = alert.userId.startsWith('d1out_') ? NonRetryableError : Error;
        throw new Failure('CRM down');
      }
    });
    receiver.onError(async (error, alert) => {
      const name = error instanceof Error ? error.name : 'unknown';
      await post(`${env.RECORDER_URL}/error/${alert.userId}`, { name });
    });
  },
});
