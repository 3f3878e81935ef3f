import { createReceiver, type ReceiverOptions } from '@churn-risk/core';
import { WORKERS_KEEP_ALIVE_BUDGET_MS } from '@churn-risk/core/adapter';
import type { D1Database } from './bindings.js';
import { D1Identities } from './d1-identities.js';
import {
  withBaseKeys,
  checkBaseOptions,
  createIsolateWorker,
  NOT_OPTIONS,
  type ChurnRiskWorker,
  type WorkerBaseOptions,
} from './worker-base.js';

export type { ChurnRiskWorker, WorkerExecutionContext, WorkerSecret } from './worker-base.js';

/**
 * Options of `createWorker`: `secret` and `setup`, plus the options of `createReceiver` except
 * `concurrency` and `queue` (queue mode is `createQueueWorker`). `dedupe` may take a D1 binding
 * from `env`.
 */
export interface CreateWorkerOptions<Env> extends WorkerBaseOptions<Env> {
  /**
   * De-duplication: `(env) => env.CHURN_RISK_DB`, a D1 database where each alert identity is
   * claimed for `dedupeTtlMs`, shared by every isolate; or the receiver's own option (`false`, or
   * in-memory settings), per isolate. Default: per isolate, in memory.
   */
  dedupe?: false | NonNullable<ReceiverOptions['dedupe']> | ((env: Env) => D1Database);
  /** How long an alert identity is claimed (in D1 or in memory), in ms. Default 72 hours. */
  dedupeTtlMs?: number;
}

/**
 * The options `createWorker` knows: any other key is a `TypeError` (option-keys.test-d.ts checks
 * that the list holds every key of `CreateWorkerOptions`).
 */
export const OPTION_KEYS = /* @__PURE__ */ withBaseKeys([
  'dedupe',
  'dedupeTtlMs',
] as const) satisfies readonly (keyof CreateWorkerOptions<unknown>)[];

const QUEUE_MODE = 'queue mode is createQueueWorker({ secret, setup, queue, dedupe })';

/**
 * Hints for keys that are not options of `createWorker` but are easily taken for one. A function,
 * not a module-level object spread (which a bundler keeps), so the queue-mode worker drops it.
 */
const hints = (): Readonly<Record<string, string>> => ({
  ...NOT_OPTIONS,
  queue: QUEUE_MODE,
  failed: QUEUE_MODE,
  deadLetterQueue: QUEUE_MODE,
});

/**
 * Creates a Cloudflare Workers module worker that receives churn-risk webhook alerts and runs
 * them in memory. The receiver (`createReceiver` from `@churn-risk/core`) is built once per
 * isolate, from the first request's `env`, and `setup` registers its handlers; later requests
 * reuse it. Every accepted alert is handed to `ctx.waitUntil` before it is accepted, so the
 * isolate stays alive until its handlers have run (at most Workers' 30 s after the answer:
 * `onError` `CUT_OFF` at 27 s). A secret that is not set answers `500 INTERNAL_ERROR` (naming the
 * `env` binding it read, never a value), accepts nothing, and the next request tries again. Runs
 * in `workerd` without `nodejs_compat`. Each alert runs in the request that accepted it (workerd
 * cancels work one request starts for another), so `concurrency` is not an option here: the
 * isolate's limit on concurrent requests bounds the alerts processed at once. For alerts that
 * survive a crash, a deploy or a slow handler, use `createQueueWorker` (Cloudflare Queues, D1):
 * `queue` is not an option here, and a `TypeError` says so.
 *
 * @example
 * export default createWorker({
 *   secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
 *   setup: (receiver, env) => {
 *     receiver.on('churn_risk_alert', async (alert) => console.log(alert.userId, alert.tier));
 *   },
 * });
 */
export function createWorker<Env = Record<string, unknown>>(
  options: CreateWorkerOptions<Env>,
): ChurnRiskWorker<Env> {
  checkBaseOptions('createWorker', options, OPTION_KEYS, hints());
  const { secret: _secret, setup: _setup, dedupe, ...receiverOptions } = options;
  // Workers cancel what `ctx.waitUntil` keeps alive 30 s after the answer.
  const budget = {
    keepAliveBudgetMs: receiverOptions.keepAliveBudgetMs ?? WORKERS_KEEP_ALIVE_BUDGET_MS,
  };
  const isolate = createIsolateWorker(
    options,
    receiverOptions,
    (env: Env) => {
      if (typeof dedupe !== 'function') {
        return { options: dedupe === undefined ? budget : { ...budget, dedupe }, mode: undefined };
      }
      const store = new D1Identities(dedupe(env));
      return { options: { ...budget, dedupe: { store } }, mode: undefined };
    },
    createReceiver,
  );
  return { fetch: isolate.fetch };
}
