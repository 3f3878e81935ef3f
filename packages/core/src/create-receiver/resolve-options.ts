import type { SignedContent } from '../signature/verify.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../signature/verify.js';
import { secretKeys } from '../signature/secrets.js';
import { MIN_SWEEP_BUDGET_MS, type AlertQueue } from '../queue-port/alert-queue.js';
import { refuseUnknownOptions } from '../options/known-options.js';
import { integerOption } from '../options/integer-option.js';
import { DEFAULT_KEEP_ALIVE_BUDGET_MS } from '../processing/keep-alive.js';
import { MEMORY_QUEUE_DEFAULTS } from '../processing/memory-queue.js';
import { DEFAULT_HANDLER_RETRIES, resolveRetryPolicy } from '../processing/retry-policy.js';
import type { RetryPolicy } from '../queue-port/try-types.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../receiver/request-body.js';
import type { ReceiverOptions } from '../receiver/types.js';

/** The options `createReceiver` knows: any other key is a `TypeError`. */
const RECEIVER_OPTION_KEYS = [
  'secret',
  'tolerance',
  'signedContent',
  'signatureHeader',
  'timestampHeader',
  'maxBodyBytes',
  'bodyTimeoutMs',
  'mode',
  'concurrency',
  'order',
  'maxQueue',
  'retries',
  'dedupe',
  'dedupeTtlMs',
  'queue',
  'consume',
  'keepAliveBudgetMs',
  'logger',
  'tracer',
  'now',
] as const satisfies readonly (keyof ReceiverOptions)[];

/** The receiver's defaults. */
export const RECEIVER_DEFAULTS = Object.freeze({
  tolerance: DEFAULT_TOLERANCE_SECONDS,
  signedContent: 'timestamp.body',
  signatureHeader: 'x-service-signature',
  timestampHeader: 'x-service-timestamp',
  maxBodyBytes: 1_048_576,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
  mode: 'async',
  concurrency: 10,
  order: 'none',
  retries: DEFAULT_HANDLER_RETRIES,
  ...MEMORY_QUEUE_DEFAULTS,
});

/** Options with every default filled in and checked. */
export interface ResolvedOptions {
  secret: ReceiverOptions['secret'];
  tolerance: number;
  signedContent: SignedContent;
  signatureHeader: string;
  timestampHeader: string;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  mode: 'async' | 'sync';
  concurrency: number;
  order: 'none' | 'per-user';
  retry: RetryPolicy;
  /** The queue the user passed, else the in-memory queue made of `maxQueue` and `dedupe`. */
  queue: AlertQueue;
  consume: boolean | 'invocation';
  /** The platform's keep-alive budget for alerts handed to a `waitUntil`; none when undefined. */
  keepAliveBudgetMs: number | undefined;
  now: () => number;
}

/**
 * The queue of a receiver created without a `queue` option: `createReceiver`'s is the in-memory
 * queue, made of `maxQueue` and `dedupe`; `createQueueReceiver` has none (the option is required),
 * so that a bundle of it holds no in-memory queue.
 */
export type DefaultQueue = (options: ReceiverOptions, now: () => number) => AlertQueue;

/** Checks the `queue` and `consume` options against the others. */
function checkQueue(options: ReceiverOptions, mode: 'async' | 'sync'): AlertQueue | undefined {
  const queue = options.queue;
  const consume: unknown = options.consume ?? true;
  if (typeof consume !== 'boolean' && consume !== 'invocation') {
    throw new TypeError("consume must be true, false or 'invocation'.");
  }
  // Without a queue, the default queue (createReceiver's in-memory one) checks `consume`.
  if (queue === undefined) return undefined;
  if (consume === 'invocation' && typeof (queue as Partial<AlertQueue>).sweep !== 'function') {
    throw new TypeError(
      `consume: 'invocation' needs a durable pull-based queue (createRedisQueue, ` +
        `createPostgresQueue, createDurableQueue); the ${queue.kind} queue cannot be swept.`,
    );
  }
  const shape = queue as Partial<AlertQueue> | null;
  if (
    typeof shape !== 'object' ||
    shape === null ||
    typeof shape.accept !== 'function' ||
    typeof shape.attach !== 'function'
  ) {
    throw new TypeError(
      'queue must be made by createMemoryQueue or createDurableQueue (an AlertQueue).',
    );
  }
  if (
    options.dedupe !== undefined ||
    options.dedupeTtlMs !== undefined ||
    options.maxQueue !== undefined
  ) {
    throw new TypeError(
      'dedupe, dedupeTtlMs and maxQueue configure the in-memory queue; with `queue`, set them ' +
        'on the queue.',
    );
  }
  if (mode === 'sync' && !queue.processesInline) {
    throw new TypeError(
      `mode 'sync' cannot be used with the ${queue.kind} queue (handlers run after the answer): ` +
        "use mode 'async', the default.",
    );
  }
  return queue;
}

/**
 * `consume`, checked against the budget an invocation sweeps with: `'invocation'` needs
 * `keepAliveBudgetMs` where the platform has no default (Node: Vercel's `maxDuration` is the
 * user's to say).
 */
function invocationBudget(
  consume: ReceiverOptions['consume'],
  keepAliveBudgetMs: number | undefined,
): boolean | 'invocation' {
  if (consume !== 'invocation') return consume ?? true;
  const budget = keepAliveBudgetMs ?? DEFAULT_KEEP_ALIVE_BUDGET_MS;
  if (budget === undefined || budget < MIN_SWEEP_BUDGET_MS) {
    throw new TypeError(
      "consume: 'invocation' needs keepAliveBudgetMs of at least 1000: how long an invocation " +
        "lives after the answer (Vercel: the route's maxDuration in ms).",
    );
  }
  return consume;
}

/** The `order` option, checked. */
function orderOption(order: unknown): 'none' | 'per-user' {
  if (order === undefined) return 'none';
  if (order !== 'none' && order !== 'per-user') {
    throw new TypeError(`order must be 'none' or 'per-user'.`);
  }
  return order;
}

function headerName(name: string, value: string): string {
  if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) {
    throw new TypeError(`${name} must be a valid HTTP header name.`);
  }
  return value.toLowerCase();
}

/**
 * Fills in the defaults and rejects bad configuration with a `TypeError` at creation time (a
 * missing or empty secret, a negative limit), never at the first delivery.
 */
export function resolveOptions(
  options: ReceiverOptions,
  defaultQueue: DefaultQueue | undefined,
  name = 'createReceiver',
): ResolvedOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError(`${name} needs an options object with a \`secret\`.`);
  }
  refuseUnknownOptions(name, options, RECEIVER_OPTION_KEYS, {
    onError: `onError is a method: call receiver.onError(fn) after ${name}`,
    onRejected: `onRejected is a method: call receiver.onRejected(fn) after ${name}`,
    handlers: "handlers are registered with receiver.on('churn_risk_alert', handler)",
  });
  secretKeys(options.secret); // throws TypeError for a missing or empty secret
  const mode = options.mode ?? RECEIVER_DEFAULTS.mode;
  if (!['async', 'sync'].includes(mode)) throw new TypeError(`mode must be 'async' or 'sync'.`);
  const now = options.now ?? Date.now;
  if (typeof (now as unknown) !== 'function')
    throw new TypeError('now must be a function returning milliseconds.');

  const queue = checkQueue(options, mode) ?? defaultQueue?.(options, now);
  if (queue === undefined) {
    throw new TypeError(
      `${name} needs a queue (createSqsQueue, createRedisQueue, createDurableQueue...); ` +
        'for the in-memory queue, use createReceiver.',
    );
  }

  return {
    secret: options.secret,
    tolerance: options.tolerance ?? RECEIVER_DEFAULTS.tolerance,
    signedContent: options.signedContent ?? RECEIVER_DEFAULTS.signedContent,
    signatureHeader: headerName(
      'signatureHeader',
      options.signatureHeader ?? RECEIVER_DEFAULTS.signatureHeader,
    ),
    timestampHeader: headerName(
      'timestampHeader',
      options.timestampHeader ?? RECEIVER_DEFAULTS.timestampHeader,
    ),
    maxBodyBytes: integerOption(
      'maxBodyBytes',
      options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
      1,
    ),
    bodyTimeoutMs: integerOption(
      'bodyTimeoutMs',
      options.bodyTimeoutMs ?? RECEIVER_DEFAULTS.bodyTimeoutMs,
      1,
    ),
    mode,
    concurrency: integerOption(
      'concurrency',
      options.concurrency ?? RECEIVER_DEFAULTS.concurrency,
      1,
    ),
    order: orderOption(options.order),
    retry: resolveRetryPolicy(options.retries),
    queue,
    consume: invocationBudget(options.consume, options.keepAliveBudgetMs),
    keepAliveBudgetMs:
      options.keepAliveBudgetMs === undefined
        ? DEFAULT_KEEP_ALIVE_BUDGET_MS
        : integerOption('keepAliveBudgetMs', options.keepAliveBudgetMs, 1),
    now,
  };
}
