import {
  AlertStalledError,
  HandlersFailedError,
  type FailedHandler,
} from '../errors/handlers-failed-error.js';
import { defaultShouldRetry, isNonRetryableError } from '../errors/non-retryable-error.js';
import type { Logger } from '../observability/logger.js';
import type { ReceiverObserver } from '../observability/receiver-observer.js';
import { fromTraceCarrier } from '../observability/trace-carrier.js';
import type { ReceiverTelemetry, TryRecord } from '../observability/telemetry.js';
import type { AlertProcessor } from '../queue-port/alert-queue.js';
import { describeError } from '../errors/handlers-failed-error.js';
import { reportFailure } from './failure-report.js';
import type { HandlerRegistry } from './handler-registry.js';
import type {
  AlertContext,
  HandlerRegistration,
  AlertRecord,
} from '../queue-port/handler-types.js';
import { isPromiseLike, type MaybePromise } from './maybe-promise.js';
import type {
  RetryPolicy,
  StoredTry,
  TryInput,
  TryLease,
  TryVerdict,
} from '../queue-port/try-types.js';

// The try runner and its one engine, the same for every queue. A try runs the alert's handlers
// that have not succeeded for it, side by side, and gives a verdict: `completed`, `retry` after
// the retry policy's delay (with the record of the handlers that succeeded), or `failed` after
// the last try. `runTryAndApply` runs a try and hands its verdict to the queue's `apply`, then
// reports a `failed` verdict that went through, so exactly once: a durable queue's `apply` stores
// the verdict (`runStoredTry` adds the stall check of a stored alert); the in-memory queue's
// keeps a `retry` with a timer that runs the next try through `runTryAndApply` again, or turns it
// into the keep-alive cut-off report (memory-queue.ts, keep-alive.ts). The registry
// (handler-registry.ts) holds the handlers; failure-report.ts reports.

const COMPLETED: TryVerdict = Object.freeze({ outcome: 'completed' });
/** No failure and no record: shared, so that a try where every handler succeeds allocates none. */
export const NONE: readonly never[] = Object.freeze([]);

/** A handler's key in the record of succeeded handlers: its id, else `\u0000#` and its position. */
export function recordKey(entry: HandlerRegistration, index: number): string {
  return entry.id ?? `\u0000#${String(index)}`;
}

/**
 * What the in-memory queue's tries get: a signal that never aborts (they hold no lease that could
 * be lost). Made at the first read, not at import: workerd forbids `new AbortController()` in a
 * module's global scope.
 */
let noLease: AbortSignal | undefined;

/** The signal of a try that holds no lease: it never aborts (one for all). */
export function neverAborting(): AbortSignal {
  return (noLease ??= new AbortController().signal);
}

/**
 * The context of one try. `signal` is read through the prototype, so that a try whose handlers
 * never read it makes no `AbortSignal`: making one is a good part of a durable queue's own
 * cost per alert (`pnpm bench drain`).
 */
class TryContext implements AlertContext {
  readonly id: string;
  readonly receivedAt: Date;
  readonly attempt: number;
  readonly event = 'churn_risk_alert';
  readonly stalls: number;
  readonly handlerId: string | undefined;
  readonly supersededBy: string | undefined;
  readonly #lease: TryLease | undefined;

  constructor(
    input: TryInput,
    attempt: number,
    lease: TryLease | undefined,
    handlerId: string | undefined,
  ) {
    this.id = input.id;
    this.receivedAt = new Date(input.receivedAt);
    this.attempt = attempt;
    this.stalls = lease?.stalls ?? 0;
    this.handlerId = handlerId;
    this.supersededBy = lease?.supersededBy;
    this.#lease = lease;
  }

  get signal(): AbortSignal {
    return this.#lease?.signal ?? neverAborting();
  }

  get idempotencyKey(): string {
    const key = keyPart(this.id);
    return this.handlerId === undefined ? key : `${key}/${keyPart(this.handlerId)}`;
  }
}

/** `text` percent-encoded (`encodeURIComponent`; a lone surrogate as U+FFFD): a header value. */
const keyPart = (text: string): string =>
  encodeURIComponent((text as unknown as { toWellFormed(): string }).toWellFormed());

/**
 * The context handlers get for try `attempt` (0 for the first): one per handler, as each has its
 * own `handlerId`; `onError` gets one without a handler id.
 */
export function contextOf(
  input: TryInput,
  attempt: number,
  lease?: TryLease,
  handlerId?: string,
): AlertContext {
  return new TryContext(input, attempt, lease, handlerId);
}

/** A handler's try: `undefined` when it succeeded, else what it threw or rejected with. */
type Outcome = { error: unknown } | undefined;
const succeeded = (): Outcome => undefined;
const failedWith = (error: unknown): Outcome => ({ error });

/** Ends the try's `process` span, if one was started, and gives the outcome. */
function ended(input: TryInput, record: TryRecord | undefined, outcome: Outcome): Outcome {
  if (record !== undefined) {
    (input.telemetry as ReceiverTelemetry).endTry(record, outcome !== undefined, outcome?.error);
  }
  return outcome;
}

/**
 * One handler's try, inside its `process` span when an OpenTelemetry SDK or meter is recording
 * (`record`). Synchronous when the handler returns without a promise.
 */
function tryOne(
  entry: HandlerRegistration,
  input: TryInput,
  context: AlertContext,
): MaybePromise<Outcome> {
  const { telemetry } = input;
  const record = telemetry?.startTry(input.link, input.id, context.attempt, entry.id);
  let returned: unknown;
  try {
    returned =
      record === undefined
        ? entry.handler(input.alert, context)
        : (telemetry as ReceiverTelemetry).runInTry(record, () =>
            entry.handler(input.alert, context),
          );
  } catch (error) {
    return ended(input, record, { error });
  }
  if (!isPromiseLike(returned)) return ended(input, record, undefined);
  const outcome = Promise.resolve(returned).then(succeeded, failedWith);
  return record === undefined ? outcome : outcome.then((result) => ended(input, record, result));
}

/**
 * Whether the error a handler failed try `attempt` with may be tried again: never for a
 * `NonRetryableError`; else the policy's `shouldRetry`, whose throw is logged and answered by the
 * default.
 */
function mayRetry(input: TryInput, error: unknown, attempt: number): boolean {
  if (isNonRetryableError(error)) return false;
  try {
    return input.retry.shouldRetry(error, attempt);
  } catch (thrown) {
    input.observer.internalError(
      `retries.shouldRetry threw for alert ${input.id} (${describeError(thrown)}); ` +
        'the default decided instead',
      { id: input.id, err: thrown },
    );
    return defaultShouldRetry(error);
  }
}

/**
 * The verdict of try `tries` (0 for the first), given the handlers that failed in it. The try is
 * the last when no retry is left, or when one failure may not be retried: the alert then
 * fails at once with every failure of this try, each reported once, and the record keeps exactly
 * the handlers that succeeded (a `retry` from the failed set runs the failed ones again).
 */
function verdictOf(
  input: TryInput,
  tries: number,
  recorded: readonly string[],
  failures: readonly FailedHandler[] | undefined,
): TryVerdict {
  if (failures === undefined) return COMPLETED;
  const failed = new Set(failures.map((failure) => failure.index));
  const record = [...recorded];
  input.handlers.forEach((entry, index) => {
    const key = recordKey(entry, index);
    if (!failed.has(index) && !record.includes(key)) record.push(key);
  });
  const error = new HandlersFailedError(failures);
  const last =
    tries >= input.retry.retries ||
    failures.some((failure) => !mayRetry(input, failure.error, tries));
  const delayMs = last ? 0 : input.retry.delayMs(tries);
  return { outcome: last ? 'failed' : 'retry', error, succeeded: record, failures, delayMs };
}

/**
 * Try number `tries` (0 for the first) of the alert: the handlers whose key is not in `recorded`
 * run side by side; the verdict says what happens next. Never throws or rejects, and calls no
 * `onError`: `runTryAndApply` reports a `failed` verdict once the queue applied it. When every
 * handler returns without a promise the verdict is synchronous (the in-memory fast path of
 * handlers that do their work synchronously, measured by `pnpm bench receiver`), and a try where
 * all succeed allocates nothing but the handlers' contexts.
 */
export function runTry(
  input: TryInput,
  tries: number,
  recorded: readonly string[],
  lease?: TryLease,
): MaybePromise<TryVerdict> {
  const { handlers } = input;
  const superseded = lease?.supersededBy !== undefined;
  let failures: FailedHandler[] | undefined;
  let pending: Promise<void>[] | undefined;
  for (let index = 0; index < handlers.length; index++) {
    const entry = handlers[index] as HandlerRegistration;
    if (recorded.length > 0 && recorded.includes(recordKey(entry, index))) continue;
    if (superseded && entry.skipSuperseded === true) {
      // Not run, and recorded as succeeded by the verdict: a retry does not run it either.
      input.counts.superseded++;
      input.telemetry?.countSuperseded(entry.id);
      continue;
    }
    const outcome = tryOne(entry, input, contextOf(input, tries, lease, entry.id));
    if (isPromiseLike(outcome)) {
      (pending ??= []).push(
        outcome.then((result) => {
          if (result !== undefined) {
            (failures ??= []).push({ index, id: entry.id, error: result.error });
          }
        }),
      );
    } else if (outcome !== undefined) {
      (failures ??= []).push({ index, id: entry.id, error: outcome.error });
    }
  }
  if (pending === undefined) return verdictOf(input, tries, recorded, failures);
  return Promise.all(pending).then(() =>
    verdictOf(
      input,
      tries,
      recorded,
      failures?.sort((a, b) => a.index - b.index),
    ),
  );
}

/**
 * After the last try (`attempt`) of an alert, once its `failed` verdict went through: each
 * failure reported once to `onError`, each with a context of its handler (`context.handlerId`),
 * or the verdict's error once for an alert failed without a handler's failure. Never rejects.
 */
async function reportTry(
  input: TryInput,
  attempt: number,
  verdict: Exclude<TryVerdict, { outcome: 'completed' }>,
): Promise<void> {
  if (verdict.failures.length === 0) {
    return reportFailure(input, contextOf(input, attempt), verdict.error, undefined);
  }
  for (const failure of verdict.failures) {
    const context = contextOf(input, attempt, undefined, failure.id);
    await reportFailure(input, context, failure.error, failure.id);
  }
}

/**
 * Where an alert's tries are: `tries`, the try to run (0 for the first), and `succeeded`, the
 * record of the handlers that succeeded before it. What `runTryAndApply` reads; a queue that keeps
 * it in memory changes it only for the next try, once the verdict was applied.
 */
export interface TriesSoFar {
  readonly tries: number;
  readonly succeeded: readonly string[];
}

/**
 * One try of an alert and its verdict applied: the one engine of every queue. `runTry`, then
 * `apply` keeps the verdict and answers whether it went through. A durable queue stores it (false
 * once the lease was lost); the in-memory queue keeps a `retry` with a timer that runs the next
 * try through this same function. A `failed` verdict is reported (`onError`) only after `apply`
 * went through, so exactly once per alert. Never rejects (or throws) unless `apply` does (then
 * nothing is reported); what it gives means nothing. Synchronous when the verdict and `apply` are
 * and there is nothing to report: a try whose handlers all return synchronously and succeed
 * allocates no promise. `apply` gets `stored` too, so that a queue that keeps the verdict on it
 * (the in-memory job) passes one shared function instead of a closure per alert.
 */
export function runTryAndApply<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  apply: (verdict: TryVerdict, stored: S) => Promise<boolean>,
  lease?: TryLease,
): Promise<unknown>;
export function runTryAndApply<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  apply: (verdict: TryVerdict, stored: S) => MaybePromise<boolean>,
  lease?: TryLease,
): MaybePromise<unknown>;
export function runTryAndApply<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  apply: (verdict: TryVerdict, stored: S) => MaybePromise<boolean>,
  lease?: TryLease,
): MaybePromise<unknown> {
  const verdict = runTry(input, stored.tries, stored.succeeded, lease);
  // A verdict that is already there is applied at once: no turn of the microtask queue per alert
  // (measured by `pnpm bench drain`).
  if (!isPromiseLike(verdict)) return applyVerdict(input, stored, verdict, apply);
  return verdict.then((settled) => applyVerdict(input, stored, settled, apply));
}

/**
 * `runTryAndApply` for an alert a durable queue holds (pulled from an `AlertStore`, or pushed by a
 * platform queue), where a worker can die mid-try: an alert that stalled more than `maxStalls`
 * times is failed without a try, through the same `apply` and report.
 */
export function runStoredTry(
  input: TryInput,
  stored: StoredTry,
  maxStalls: number,
  apply: (verdict: TryVerdict) => Promise<boolean>,
  lease?: TryLease,
): Promise<unknown> {
  if (stored.stalls <= maxStalls) return runTryAndApply(input, stored, apply, lease);
  const error = new AlertStalledError(stored.stalls);
  // An alert failed for good, at `error`: the default logger prints it too.
  input.observer.logger.error(
    { id: input.id, err: error },
    `churn-risk: alert ${input.id}: ${error.message}`,
  );
  const failed: TryVerdict = {
    outcome: 'failed',
    error,
    succeeded: stored.succeeded,
    failures: NONE,
    delayMs: 0,
  };
  return applyVerdict(input, stored, failed, apply);
}

/**
 * `apply`, then the report of a `failed` verdict that went through. Any other verdict gives
 * `apply`'s own answer: no layer of its own on the durable queues' hot path.
 */
function applyVerdict<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  verdict: TryVerdict,
  apply: (verdict: TryVerdict, stored: S) => Promise<boolean>,
): Promise<unknown>;
function applyVerdict<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  verdict: TryVerdict,
  apply: (verdict: TryVerdict, stored: S) => MaybePromise<boolean>,
): MaybePromise<unknown>;
function applyVerdict<S extends TriesSoFar>(
  input: TryInput,
  stored: S,
  verdict: TryVerdict,
  apply: (verdict: TryVerdict, stored: S) => MaybePromise<boolean>,
): MaybePromise<unknown> {
  // The try's number, read before `apply` (which may count the next try).
  const tries = stored.tries;
  // A throw of `apply` goes to the caller as it is (the durable queues await it inside a try).
  const applied = apply(verdict, stored);
  if (verdict.outcome !== 'failed') return applied;
  return Promise.resolve(applied).then((went) =>
    went ? reportTry(input, tries, verdict) : undefined,
  );
}

/**
 * The receiver's side of processing as a queue sees it (the `AlertProcessor` a queue is attached
 * with): the input of an alert's tries, with the handlers registered when it is taken.
 */
export class TryRunner implements AlertProcessor {
  readonly concurrency: number;
  order: 'none' | 'per-user' = 'none';
  readonly #registry: HandlerRegistry;
  readonly #retry: RetryPolicy;
  readonly #counts: { failed: number; superseded: number };
  readonly #observer: ReceiverObserver;

  /**
   * `counts.failed` goes up by one for each handler that failed after its retries; `observer`
   * logs failures and traces each try.
   */
  constructor(
    registry: HandlerRegistry,
    concurrency: number,
    retry: RetryPolicy,
    counts: { failed: number; superseded: number },
    observer: ReceiverObserver,
  ) {
    this.#registry = registry;
    this.concurrency = concurrency;
    this.#retry = retry;
    this.#counts = counts;
    this.#observer = observer;
  }

  get logger(): Logger {
    return this.#observer.logger;
  }

  input(entry: AlertRecord<'accepted'>): TryInput {
    const observer = this.#observer;
    const { telemetry } = observer;
    return {
      alert: entry.alert,
      id: entry.id,
      receivedAt: entry.receivedAt,
      handlers: this.#registry.handlers,
      errorHandlers: this.#registry.errorHandlers,
      retry: this.#retry,
      counts: this.#counts,
      observer,
      telemetry,
      link:
        telemetry === undefined || entry.traceContext === undefined
          ? undefined
          : fromTraceCarrier(entry.traceContext),
    };
  }
}
