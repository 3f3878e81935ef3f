import {
  createReceiver,
  errorResponse,
  IntegrationError,
  refuseUnknownOptions,
  WORKERS_KEEP_ALIVE_BUDGET_MS,
  type Receiver,
  type ReceiverOptions,
  type ReceiverResult,
  type Secret,
} from '@churn-risk/core';
import type { D1Database, QueueBatch, QueueProducer } from './bindings.js';
import { createCloudflareQueue, type CloudflareQueue } from './cloudflare-queue.js';
import { D1Identities } from './d1-tables.js';
import { resolveSecret } from './resolve-secret.js';

/**
 * The part of a Workers `ExecutionContext` the worker uses. The platform's `ctx` fits; so does any
 * object with a `waitUntil` method (in tests).
 */
export interface WorkerExecutionContext {
  /** Keeps the isolate alive until `promise` settles, after the response has been sent. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Where the signing secret comes from: a function of the worker's `env` (the usual case: a
 * secret set with `wrangler secret put`), or the secret itself. The function may return a string
 * or an array of strings (rotation); anything else, an empty string included, is "not set".
 */
export type WorkerSecret<Env> = Secret | ((env: Env) => unknown);

/**
 * Options of `createWorker`: `secret` and `setup`, plus the options of `createReceiver` except
 * `concurrency` (see `createWorker`). `queue` and `dedupe` take bindings from `env` here.
 */
export interface CreateWorkerOptions<Env> extends Omit<
  ReceiverOptions,
  'secret' | 'concurrency' | 'queue' | 'dedupe'
> {
  /**
   * The webhook signing secret, usually read from `env`:
   * `secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET`.
   */
  secret: WorkerSecret<Env>;
  /**
   * Registers the handlers, once per isolate, on the receiver built from the first request's `env`
   * (`receiver.on('churn_risk_alert', ...)`). It must register them before it returns.
   */
  setup: (receiver: Receiver, env: Env) => void;
  /**
   * Queue mode: the Cloudflare Queue's producer binding, `(env) => env.CHURN_RISK_ALERTS`. Each
   * accepted alert is sent to it before the `202`, and the worker's `queue` handler (the
   * consumer) runs the handlers, with retries as new messages and failures kept in D1. Without
   * it, alerts run in the isolate that accepted them, kept alive by `ctx.waitUntil`.
   */
  queue?: (env: Env) => QueueProducer;
  /**
   * De-duplication: `(env) => env.CHURN_RISK_DB`, a D1 database where each alert identity is
   * claimed for 72 hours (`dedupeTtlMs`), shared by every isolate; or the receiver's own option
   * (`false`, or in-memory settings), per isolate. Default: per isolate, in memory.
   */
  dedupe?: false | NonNullable<ReceiverOptions['dedupe']> | ((env: Env) => D1Database);
  /**
   * Queue mode's failed store: the D1 database whose table `churn_risk_failed` keeps the alerts
   * that failed after their last try. Default: the `dedupe` database. Queue mode needs one of
   * the two.
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

/** A Cloudflare Workers module worker: `export default` it from the worker's entry module. */
export interface ChurnRiskWorker<Env> {
  /** Answers one request with the receiver's answer (SPEC section 4's status table). */
  fetch(request: Request, env: Env, ctx: WorkerExecutionContext): Promise<Response>;
}

/**
 * No alert waits for another one's slot: in workerd, work that one request starts for another is
 * cancelled when the first request ends, so each alert runs in the request that accepted it.
 * The isolate's own limit on concurrent requests bounds how many run at once.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/**
 * The options `createWorker` knows: any other key is a `TypeError` (option-keys.test-d.ts checks
 * that the list holds every key of `CreateWorkerOptions`).
 */
export const OPTION_KEYS = [
  'secret',
  'setup',
  'queue',
  'dedupe',
  'failed',
  'deadLetterQueue',
  'dedupeTtlMs',
  'tolerance',
  'signedContent',
  'signatureHeader',
  'timestampHeader',
  'maxBodyBytes',
  'mode',
  'maxQueue',
  'retries',
  'consume',
  'keepAliveBudgetMs',
  'logger',
  'tracer',
  'now',
] as const satisfies readonly (keyof CreateWorkerOptions<unknown>)[];

/** Hints for keys that are not options of `createWorker` but are easily taken for one. */
const NOT_OPTIONS = {
  concurrency: 'each alert runs in the request that accepted it',
  onError: 'onError is a method: call receiver.onError(fn) in setup',
};

/** `createReceiver`'s errors describe options, never their values: safe to answer with. */
function buildFailure(error: unknown): IntegrationError {
  if (error instanceof IntegrationError) return error;
  const detail = error instanceof TypeError ? ` ${error.message}` : '';
  return new IntegrationError(
    'INTERNAL_ERROR',
    `The worker could not create its churn-risk receiver.${detail}`,
    { cause: error },
  );
}

function toResponse(result: ReceiverResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

function checkOptions(options: CreateWorkerOptions<never>): void {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new TypeError('createWorker needs an options object: { secret, setup }.');
  }
  refuseUnknownOptions('createWorker', options, OPTION_KEYS, NOT_OPTIONS);
  if (typeof options.setup !== 'function') {
    throw new TypeError('createWorker needs setup: (receiver, env) => { receiver.on(...) }.');
  }
  const { secret, queue, dedupe, failed } = options as unknown as Record<string, unknown>;
  if (queue !== undefined && typeof queue !== 'function') {
    throw new TypeError(
      'createWorker needs queue: (env) => env.CHURN_RISK_ALERTS (a Queue binding).',
    );
  }
  if (failed !== undefined && typeof failed !== 'function') {
    throw new TypeError('createWorker needs failed: (env) => env.CHURN_RISK_DB (a D1 binding).');
  }
  if (queue !== undefined && typeof dedupe !== 'function' && failed === undefined) {
    throw new TypeError(
      'Queue mode keeps failed alerts in a D1 table: give createWorker dedupe: (env) => ' +
        'env.CHURN_RISK_DB (de-duplication shared by every isolate, and the failed store), or ' +
        'failed: (env) => env.CHURN_RISK_DB.',
    );
  }
  if (typeof secret !== 'function' && typeof secret !== 'string' && !Array.isArray(secret)) {
    throw new TypeError(
      'createWorker needs secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET (or the secret itself).',
    );
  }
}

/**
 * Creates a Cloudflare Workers module worker that receives churn-risk webhook alerts. The
 * receiver (`createReceiver` from `@churn-risk/core`) is built once per isolate, from the first
 * request's `env`, and `setup` registers its handlers; later requests reuse it. Every accepted
 * alert is handed to `ctx.waitUntil` before it is accepted, so the isolate stays alive until its
 * handlers have run. A secret that is not set answers `500 INTERNAL_ERROR` (naming the `env`
 * binding it read, never a value), accepts nothing, and the next request tries again. Runs in
 * `workerd` without `nodejs_compat`. Each alert runs in the request that accepted it (workerd
 * cancels work one request starts for another), so `concurrency` is not an option here: the
 * isolate's limit on concurrent requests bounds the alerts processed at once.
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
  options: CreateWorkerOptions<Env> & { queue: (env: Env) => QueueProducer },
): ChurnRiskQueueWorker<Env>;
export function createWorker<Env = Record<string, unknown>>(
  options: CreateWorkerOptions<Env>,
): ChurnRiskWorker<Env>;
export function createWorker<Env = Record<string, unknown>>(
  options: CreateWorkerOptions<Env>,
): ChurnRiskWorker<Env> | ChurnRiskQueueWorker<Env> {
  checkOptions(options);
  const {
    secret,
    setup,
    queue: producerOf,
    dedupe,
    failed: failedOf,
    deadLetterQueue,
    dedupeTtlMs,
    ...receiverOptions
  } = options;
  const log = options.logger;
  let built: { receiver: Receiver; cloudflare?: CloudflareQueue | undefined } | undefined;

  /** The receiver's options for `env`: queue mode's queue, or in memory, the budget and dedupe. */
  const modeFor = (env: Env): { mode: Partial<ReceiverOptions>; cloudflare?: CloudflareQueue } => {
    if (producerOf === undefined) {
      // Workers cancel what `ctx.waitUntil` keeps alive 30 s after the answer (SPEC 16).
      const budget = { keepAliveBudgetMs: receiverOptions.keepAliveBudgetMs ?? WORKERS_KEEP_ALIVE_BUDGET_MS };
      if (typeof dedupe !== 'function') {
        return { mode: dedupe === undefined ? budget : { ...budget, dedupe } };
      }
      const store = new D1Identities(dedupe(env));
      const ttl = dedupeTtlMs === undefined ? {} : { ttlMs: dedupeTtlMs };
      return { mode: { ...budget, dedupe: { store, ...ttl } } };
    }
    const db = typeof dedupe === 'function' ? dedupe(env) : undefined;
    const cloudflare = createCloudflareQueue({
      producer: producerOf(env),
      dedupe: db,
      failed: failedOf?.(env) ?? (db as D1Database),
      deadLetterQueue,
      dedupeTtlMs,
      logger: log,
    });
    return { mode: { queue: cloudflare.queue }, cloudflare };
  };

  /**
   * The isolate's receiver (and queue mode), built at the first call that succeeds: a failure is
   * not kept, so the next request builds again.
   */
  const buildFor = (env: Env): NonNullable<typeof built> => {
    if (built !== undefined) return built;
    const { mode, cloudflare } = modeFor(env);
    const receiver = createReceiver({
      ...receiverOptions,
      ...mode,
      concurrency: UNBOUNDED,
      secret: resolveSecret(secret, env),
    });
    setup(receiver, env);
    return (built = { receiver, cloudflare });
  };

  const report = (error: unknown): IntegrationError => {
    const failure = buildFailure(error);
    // Written like the receiver's own 5xx lines (SPEC 14); `err` only for the user's own code.
    const fields = failure === error ? { code: failure.code } : { code: failure.code, err: error };
    if (log === undefined) console.error(failure.message, fields);
    else log.error(fields, failure.message);
    return failure;
  };

  const worker: ChurnRiskWorker<Env> = {
    async fetch(request, env, ctx) {
      let current: Receiver;
      try {
        current = buildFor(env).receiver;
      } catch (error) {
        return toResponse(errorResponse(report(error)));
      }
      // Bound: an unbound `ctx.waitUntil` throws "Illegal invocation" in workerd.
      return current.fetch(request, {
        waitUntil: (promise) => {
          ctx.waitUntil(promise);
        },
      });
    },
  };
  if (producerOf === undefined) return worker;
  return {
    fetch: (request, env, ctx) => worker.fetch(request, env, ctx),
    async queue(batch, env) {
      let cloudflare: CloudflareQueue | undefined;
      try {
        ({ cloudflare } = buildFor(env));
      } catch (error) {
        // Thrown, so that the platform delivers the batch again once the worker can build.
        throw report(error);
      }
      await cloudflare?.consume(batch);
    },
  };
}
