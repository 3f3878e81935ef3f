import { createQueueReceiver } from '@churn-risk/core';
import type { D1Database, QueueBatch, QueueProducer } from './bindings.js';
import { createCloudflareQueue, type CloudflareQueue } from './cloudflare-queue.js';
import {
  withBaseKeys,
  checkBaseOptions,
  createIsolateWorker,
  NOT_OPTIONS,
  type ChurnRiskWorker,
  type WorkerBaseOptions,
  type WorkerExecutionContext,
} from './worker-base.js';

/**
 * Options of `createQueueWorker`: `secret`, `setup` and `queue`, the bindings of queue mode as
 * functions of `env`, plus the options of `createReceiver` except `concurrency`.
 */
export interface CreateQueueWorkerOptions<Env> extends WorkerBaseOptions<Env> {
  /**
   * The Cloudflare Queue's producer binding, `(env) => env.CHURN_RISK_ALERTS`. Each accepted
   * alert is sent to it before the `202`, and the worker's `queue` handler (the consumer) runs
   * the handlers, with retries as new messages and failures kept in D1.
   */
  queue: (env: Env) => QueueProducer;
  /**
   * De-duplication shared by every isolate: `(env) => env.CHURN_RISK_DB`, a D1 database where
   * each alert identity is claimed for 72 hours (`dedupeTtlMs`). Without it, per isolate, in
   * memory. It is also the failed store unless `failed` names another database.
   */
  dedupe?: (env: Env) => D1Database;
  /**
   * The failed store: the D1 database whose table `churn_risk_failed` keeps the alerts that
   * failed after their last try. Default: the `dedupe` database. One of the two is needed.
   */
  failed?: (env: Env) => D1Database;
  /**
   * The dead-letter queue's name, when this worker consumes it (wrangler.toml): its messages,
   * alerts whose consumer died `max_retries` times, go to the failed store with `onError` once.
   */
  deadLetterQueue?: string;
  /** How long a D1 identity claim lasts, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
}

/** A module worker in queue mode: the webhook endpoint, and the Queue's consumer. */
export interface ChurnRiskQueueWorker<Env> extends ChurnRiskWorker<Env> {
  /**
   * The consumer (`[[queues.consumers]]` in wrangler.toml): runs each message of the batch
   * through core's try protocol, then acks it, re-sends it with the record of the handlers that
   * succeeded and core's delay, or stores it as failed.
   */
  queue(batch: QueueBatch, env: Env, ctx: WorkerExecutionContext): Promise<void>;
}

/**
 * The options `createQueueWorker` knows: any other key is a `TypeError` (option-keys.test-d.ts
 * checks that the list holds every key of `CreateQueueWorkerOptions`).
 */
export const OPTION_KEYS = /* @__PURE__ */ withBaseKeys([
  'queue',
  'dedupe',
  'failed',
  'deadLetterQueue',
  'dedupeTtlMs',
] as const) satisfies readonly (keyof CreateQueueWorkerOptions<unknown>)[];

function checkQueueOptions(options: Record<string, unknown>): void {
  const { queue, dedupe, failed } = options;
  if (typeof queue !== 'function') {
    throw new TypeError(
      'createQueueWorker needs queue: (env) => env.CHURN_RISK_ALERTS (a Queue binding); ' +
        'without a queue, use createWorker.',
    );
  }
  if (dedupe !== undefined && typeof dedupe !== 'function') {
    throw new TypeError(
      'createQueueWorker needs dedupe: (env) => env.CHURN_RISK_DB (a D1 binding), or no dedupe.',
    );
  }
  if (failed !== undefined && typeof failed !== 'function') {
    throw new TypeError(
      'createQueueWorker needs failed: (env) => env.CHURN_RISK_DB (a D1 binding).',
    );
  }
  if (dedupe === undefined && failed === undefined) {
    throw new TypeError(
      'Queue mode keeps failed alerts in a D1 table: give createQueueWorker dedupe: (env) => ' +
        'env.CHURN_RISK_DB (de-duplication shared by every isolate, and the failed store), or ' +
        'failed: (env) => env.CHURN_RISK_DB.',
    );
  }
}

/**
 * Creates a Cloudflare Workers module worker in queue mode (Cloudflare Queues and D1): `fetch`
 * verifies each delivery, claims its identity (in D1 with `dedupe`) and sends the alert to the
 * Queue before it answers `202` (a send that fails answers `503 OVERLOADED`, nothing claimed);
 * `queue`, the Queue's consumer, runs the handlers through core's try protocol, each try in its
 * own consumer invocation, retries as new messages that carry the record of the handlers that
 * succeeded, and alerts failed after their last try in a D1 table (`createFailedStore` lists and
 * retries them). So an alert survives a crash, a deploy and handlers slower than Workers' 30 s.
 * The receiver is built once per isolate from the first `env`, as in `createWorker`, and `setup`
 * registers its handlers. Runs in `workerd` without `nodejs_compat`.
 *
 * @example
 * export default createQueueWorker<Env>({
 *   secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
 *   queue: (env) => env.CHURN_RISK_ALERTS, // [[queues.producers]] and [[queues.consumers]]
 *   dedupe: (env) => env.CHURN_RISK_DB, // [[d1_databases]]: identities and failed alerts
 *   setup: (receiver, env) => {
 *     receiver.on('churn_risk_alert', async (alert) => console.log(alert.userId, alert.tier));
 *   },
 * });
 */
export function createQueueWorker<Env = Record<string, unknown>>(
  options: CreateQueueWorkerOptions<Env>,
): ChurnRiskQueueWorker<Env> {
  checkBaseOptions('createQueueWorker', options, OPTION_KEYS, NOT_OPTIONS);
  checkQueueOptions(options);
  const {
    secret: _secret,
    setup: _setup,
    queue: producerOf,
    dedupe,
    failed: failedOf,
    deadLetterQueue,
    dedupeTtlMs,
    ...receiverOptions
  } = options;
  const isolate = createIsolateWorker(
    options,
    receiverOptions,
    (env: Env) => {
      const db = dedupe?.(env);
      const failed = failedOf?.(env) ?? db;
      // checkQueueOptions made sure one of the two is given; an env without the binding lands here.
      if (failed === undefined)
        throw new TypeError(
          'createQueueWorker needs a D1 binding for failed alerts: env.CHURN_RISK_DB.',
        );
      const cloudflare: CloudflareQueue = createCloudflareQueue({
        producer: producerOf(env),
        dedupe: db,
        failed,
        deadLetterQueue,
        dedupeTtlMs,
        logger: options.logger,
      });
      return { options: { queue: cloudflare.queue }, mode: cloudflare };
    },
    // Without the in-memory queue's code: a smaller worker bundle.
    createQueueReceiver,
  );
  return {
    fetch: isolate.fetch,
    async queue(batch, env) {
      let cloudflare: CloudflareQueue;
      try {
        ({ mode: cloudflare } = isolate.build(env));
      } catch (error) {
        // Thrown, so that the platform delivers the batch again once the worker can build.
        throw isolate.report(error);
      }
      await cloudflare.consume(batch);
    },
  };
}
