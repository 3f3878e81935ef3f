import type { TracerSpanContext as SpanContext } from '../observability/receiver-tracer.js';
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
import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import { isThenable } from './work-queue.js';
import type {
  AlertContext,
  AnyHandler,
  ErrorHandler,
  HandlerOptions,
  HandlerRegistration,
  QueuedAlert,
} from './handler-types.js';

// The try protocol (SPEC 13 and 17), the one for every queue. A try runs the alert's handlers that
// have not succeeded for it, side by side, and gives a verdict: `completed`, `retry` after the
// retry policy's delay (with the record of the handlers that succeeded), or `failed` after the
// last try. The in-memory queue applies a verdict with a timer (`runAlert`); the durable runner
// (`createDurableQueue`) stores it, and reports a failure only once the store has taken it.

/** What the tries of one alert need: the queued alert, plus the receiver's handlers and policy. */
export interface TryInput {
  alert: ChurnRiskAlert;
  id: string;
  /** Milliseconds since the epoch (a `Date` is made per try, as handlers may keep it). */
  receivedAt: number;
  /** The handlers when the alert was taken (later `on`/`off` calls do not change them). */
  handlers: readonly HandlerRegistration[];
  errorHandlers: readonly ErrorHandler[];
  retry: RetryPolicy;
  /** Counts handlers that failed after their retries (the receiver's `stats.failed`). */
  counts: { failed: number };
  /** The receiver's logger and listeners. */
  observer: ReceiverObserver;
  /** OpenTelemetry, when `@opentelemetry/api` is installed. */
  telemetry: ReceiverTelemetry | undefined;
  /** The delivery's `receive` span, which each try's `process` span links to. */
  link: SpanContext | undefined;
}

/** A checked retry policy (the `retries` option). */
export interface RetryPolicy {
  /** Further tries after the first failure. */
  retries: number;
  /** Delay before retry `retry` (1-based), in milliseconds; never negative or NaN. */
  delayMs: (retry: number) => number;
  /** `retries.shouldRetry`, or `defaultShouldRetry`: whether a failed try is tried again. */
  shouldRetry: (error: unknown, attempt: number) => boolean;
}

/**
 * What one try decided. `succeeded` is the record of the handlers that have succeeded for the
 * alert so far (their ids; a handler without an id, possible only where it is the alert's one
 * handler on a durable queue, by a key of its position): the next try skips exactly these.
 * `failures` are the handlers that failed this try.
 */
export type TryVerdict =
  | { readonly outcome: 'completed' }
  | {
      readonly outcome: 'retry' | 'failed';
      /** A `HandlersFailedError`, or an `AlertStalledError` for an alert failed without a try. */
      readonly error: Error;
      readonly succeeded: readonly string[];
      readonly failures: readonly FailedHandler[];
      /** `retry` only: milliseconds before the next try. */
      readonly delayMs: number;
    };

const COMPLETED: TryVerdict = Object.freeze({ outcome: 'completed' });
/** No failure and no record: shared, so that a try where every handler succeeds allocates none. */
const NONE: readonly never[] = Object.freeze([]);

/** A handler's key in the record of succeeded handlers: its id, else its position. */
function keyOf(entry: HandlerRegistration, index: number): string {
  return entry.id ?? `\u0000#${String(index)}`;
}

/** What a durable queue's try adds to the handlers' context: its lease's signal, the stalls. */
export interface TryLease {
  readonly signal: AbortSignal;
  readonly stalls: number;
}

/**
 * What the in-memory queue's tries get: a signal that never aborts (they hold no lease that could
 * be lost). Made at the first try, not at import: workerd forbids `new AbortController()` in a
 * module's global scope.
 */
let noLease: TryLease | undefined;

/** The context handlers get for try `attempt` (0 for the first). */
export function contextOf(input: TryInput, attempt: number, lease?: TryLease): AlertContext {
  const held =
    lease ?? (noLease ??= Object.freeze({ signal: new AbortController().signal, stalls: 0 }));
  return {
    id: input.id,
    receivedAt: new Date(input.receivedAt),
    attempt,
    event: 'churn_risk_alert',
    signal: held.signal,
    stalls: held.stalls,
  };
}

type Outcome = { error: unknown } | undefined;
const succeeded = (): undefined => undefined;
const failedWith = (error: unknown): Outcome => ({ error });

/** One handler's try inside its `process` span (an OpenTelemetry SDK or meter is recording). */
function tryTraced(
  entry: HandlerRegistration,
  input: TryInput,
  context: AlertContext,
  telemetry: ReceiverTelemetry,
  record: TryRecord,
): Outcome | Promise<Outcome> {
  const failed = (error: unknown): Outcome => {
    telemetry.endTry(record, true, error);
    return { error };
  };
  const ok = (): Outcome => {
    telemetry.endTry(record, false);
    return undefined;
  };
  let returned: unknown;
  try {
    returned = telemetry.runInTry(record, () => entry.handler(input.alert, context));
  } catch (error) {
    return failed(error);
  }
  return isThenable(returned) ? Promise.resolve(returned).then(ok, failed) : ok();
}

/** One handler's try: `undefined` when it succeeded, else what it threw or rejected with. */
function tryOne(
  entry: HandlerRegistration,
  input: TryInput,
  context: AlertContext,
): Outcome | Promise<Outcome> {
  const { telemetry } = input;
  const record = telemetry?.startTry(input.link, input.id, context.attempt, entry.id);
  if (record !== undefined) {
    return tryTraced(entry, input, context, telemetry as ReceiverTelemetry, record);
  }
  let returned: unknown;
  try {
    returned = entry.handler(input.alert, context);
  } catch (error) {
    return { error };
  }
  return isThenable(returned) ? Promise.resolve(returned).then(succeeded, failedWith) : undefined;
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
      `retries.shouldRetry threw for alert ${input.id} (${describe(thrown)}); ` +
        'the default decided instead',
      { id: input.id, err: thrown },
    );
    return defaultShouldRetry(error);
  }
}

/**
 * The verdict of try `tries` (0 for the first), given the handlers that failed in it. The try is
 * the last when no retry is left, or when one failure may not be retried (SPEC 18): the alert then
 * fails at once with every failure of this try, each reported once, and the record keeps exactly
 * the handlers that succeeded (a `retry` from the failed set runs the failed ones again).
 */
function verdictOf(
  input: TryInput,
  tries: number,
  recorded: readonly string[],
  failures: readonly FailedHandler[],
): TryVerdict {
  if (failures.length === 0) return COMPLETED;
  const failed = new Set(failures.map((failure) => failure.index));
  const record = [...recorded];
  input.handlers.forEach((entry, index) => {
    const key = keyOf(entry, index);
    if (!failed.has(index) && !record.includes(key)) record.push(key);
  });
  const error = new HandlersFailedError(failures);
  const last =
    tries >= input.retry.retries ||
    failures.some((failure) => !mayRetry(input, failure.error, tries));
  const delayMs = last ? 0 : input.retry.delayMs(tries + 1);
  return { outcome: last ? 'failed' : 'retry', error, succeeded: record, failures, delayMs };
}

/**
 * Try number `tries` (0 for the first) of the alert: the handlers whose key is not in `recorded`
 * run side by side; the verdict says what happens next. Never throws or rejects, and calls no
 * `onError`: the caller reports a `failed` verdict (`reportFailures`) once it is final. When every
 * handler returns without a promise the verdict is synchronous (the in-memory fast path of
 * handlers that do their work synchronously, measured by `pnpm bench receiver`), and a try where
 * all succeed allocates nothing but the context.
 */
export function runTry(
  input: TryInput,
  tries: number,
  recorded: readonly string[],
  lease?: TryLease,
): TryVerdict | Promise<TryVerdict> {
  const { handlers } = input;
  const context = contextOf(input, tries, lease);
  let failures: FailedHandler[] | undefined;
  let pending: Promise<void>[] | undefined;
  for (let index = 0; index < handlers.length; index++) {
    const entry = handlers[index] as HandlerRegistration;
    if (recorded.length > 0 && recorded.includes(keyOf(entry, index))) continue;
    const outcome = tryOne(entry, input, context);
    if (outcome === undefined) continue;
    if (outcome instanceof Promise) {
      (pending ??= []).push(
        outcome.then((result) => {
          if (result !== undefined) {
            (failures ??= []).push({ index, id: entry.id, error: result.error });
          }
        }),
      );
    } else {
      (failures ??= []).push({ index, id: entry.id, error: outcome.error });
    }
  }
  if (pending === undefined) {
    return failures === undefined ? COMPLETED : verdictOf(input, tries, recorded, failures);
  }
  return Promise.all(pending).then(() =>
    failures === undefined
      ? COMPLETED
      : verdictOf(
          input,
          tries,
          recorded,
          failures.sort((a, b) => a.index - b.index),
        ),
  );
}

/**
 * Waits `ms` milliseconds. The timer is deliberately not `unref`'d: a handler waiting for its retry
 * is work in flight, and keeps a Node process alive until it has run (use `close()` to finish).
 */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A keep-alive guard (`KeepAliveGuard` of keep-alive.ts): the platform's budget over the in-memory
 * tries of an alert kept alive by a `waitUntil`.
 */
export interface KeepAliveGuard {
  /** The try running or last run, and the handlers recorded as succeeded so far. */
  attempt: number;
  succeeded: readonly string[];
  /** True once the cut-off was reported. */
  readonly cut: boolean;
  /** Whether a retry after `delayMs` starts before the cut-off point. */
  allows(delayMs: number): boolean;
  /** Claims the alert's one report: true for the first caller only. */
  claim(): boolean;
  /** Reports the cut-off (once); resolves to the failures counted (1, or 0 after a report). */
  cutOff(cause: unknown): Promise<number>;
  /** Runs the tries, and reports the cut-off if its point comes first. */
  run(work: () => number | Promise<number>): number | Promise<number>;
}

/**
 * After a try that was not final: the retries in this process (timers), then the report. Under a
 * keep-alive `guard`, no retry starts whose delay ends past its cut-off point, and nothing is
 * reported once it reported the cut-off.
 */
async function retryInProcess(
  input: TryInput,
  first: TryVerdict,
  guard?: KeepAliveGuard,
): Promise<number> {
  let verdict = first;
  let tries = 0;
  while (verdict.outcome === 'retry') {
    if (guard !== undefined) {
      guard.succeeded = verdict.succeeded;
      if (!guard.allows(verdict.delayMs)) return guard.cutOff(verdict.error);
    }
    await sleep(verdict.delayMs);
    if (guard?.cut === true) return 0;
    tries += 1;
    if (guard !== undefined) guard.attempt = tries;
    verdict = await runTry(input, tries, verdict.succeeded);
  }
  if (verdict.outcome === 'completed' || guard?.claim() === false) return 0;
  await reportFailures(input, tries, verdict.failures);
  return verdict.failures.length;
}

/**
 * Every try of an alert in this process (the in-memory queue): `runTry`, and each `retry` verdict
 * applied with a timer. Never throws or rejects; gives the number of handlers that failed after
 * their retries, synchronously when the first try's handlers all returned synchronously and
 * succeeded. `guard`: the alert is kept alive by a platform `waitUntil` with a budget.
 */
export function runAlert(input: TryInput, guard?: KeepAliveGuard): number | Promise<number> {
  if (guard !== undefined) return guard.run(() => triesOf(input, guard));
  return triesOf(input, undefined);
}

function triesOf(input: TryInput, guard: KeepAliveGuard | undefined): number | Promise<number> {
  const first = runTry(input, 0, NONE);
  if (!isThenable(first)) {
    return first.outcome === 'completed' ? 0 : retryInProcess(input, first, guard);
  }
  return first.then((verdict) =>
    verdict.outcome === 'completed' ? 0 : retryInProcess(input, verdict, guard),
  );
}

/** A stored alert's state at its take: the tries made, the record, and how often it stalled. */
export interface StoredTry {
  readonly tries: number;
  readonly succeeded: readonly string[];
  readonly stalls: number;
}

/**
 * One try of an alert a durable queue holds (pulled from an `AlertStore`, or pushed by a platform
 * queue): `runTry`, then `apply` stores the verdict and answers whether it went through (false once
 * the lease was lost). A failed alert is reported (`onError`) only after `apply` went through, so
 * exactly once. An alert that stalled more than `maxStalls` times is failed without a try. Never
 * rejects unless `apply` does (then nothing is reported).
 */
export async function runStoredTry(
  input: TryInput,
  stored: StoredTry,
  maxStalls: number,
  apply: (verdict: TryVerdict) => Promise<boolean>,
  lease?: TryLease,
): Promise<void> {
  if (stored.stalls > maxStalls) {
    const error = new AlertStalledError(stored.stalls);
    const verdict: TryVerdict = {
      outcome: 'failed',
      error,
      succeeded: stored.succeeded,
      failures: NONE,
      delayMs: 0,
    };
    if (await apply(verdict)) await reportFailure(input, stored.tries, error, undefined);
    return;
  }
  const verdict = await runTry(input, stored.tries, stored.succeeded, lease);
  const applied = await apply(verdict);
  if (applied && verdict.outcome === 'failed') {
    await reportFailures(input, stored.tries, verdict.failures);
  }
}

/** An example for the messages below. */
const EXAMPLE = "receiver.on('churn_risk_alert', handler, { id: 'crm-task' })";

/**
 * Checks a registration against the handlers already registered and returns it: the refusals of
 * SPEC 13 (an id that is not a non-empty string, a repeated id, a handler without an id next to
 * another one on a durable queue) are `TypeError`s.
 */
function registration(
  existing: readonly HandlerRegistration[],
  handler: AnyHandler,
  options: HandlerOptions | undefined,
  durableQueue: string | undefined,
): HandlerRegistration {
  if (options !== undefined && (typeof options !== 'object' || (options as unknown) === null)) {
    throw new TypeError('The options of on() must be an object, such as { id: "crm-task" }.');
  }
  const id = options?.id;
  if (id !== undefined && (typeof id !== 'string' || id.trim() === '')) {
    throw new TypeError(`A handler id must be a non-empty string, as in ${EXAMPLE}.`);
  }
  if (id !== undefined && existing.some((entry) => entry.id === id)) {
    throw new TypeError(`A handler with the id "${id}" is already registered: ids must be unique.`);
  }
  if (durableQueue !== undefined && existing.length > 0) {
    const unnamed = id === undefined || existing.some((entry) => entry.id === undefined);
    if (unnamed) {
      throw new TypeError(
        `With a durable queue (${durableQueue}) and two or more handlers, every handler needs an ` +
          `id, the name under which the queue records that it succeeded for an alert: ${EXAMPLE}.`,
      );
    }
  }
  return { handler, id };
}

/**
 * The receiver's handlers, `onError` handlers and retry policy, as a queue sees them
 * (it is the `AlertProcessor` a queue is attached with). The lists are replaced, never mutated, when handlers are added or removed:
 * an alert being processed keeps the lists it started with, without a copy per alert.
 */
export class HandlerRegistry {
  handlers: readonly HandlerRegistration[] = [];
  errorHandlers: readonly ErrorHandler[] = [];
  readonly concurrency: number;
  readonly #retry: RetryPolicy;
  readonly #counts: { failed: number };
  readonly #observer: ReceiverObserver;
  /** The durable queue's kind (handler ids are then required next to another handler). */
  readonly #durableQueue: string | undefined;

  /**
   * `counts.failed` goes up by one for each handler that failed after its retries; `observer`
   * logs failures and traces each try. `durableQueue` names a queue that stores alerts outside
   * this process (`undefined` for an in-process queue).
   */
  constructor(
    concurrency: number,
    retry: RetryPolicy,
    counts: { failed: number },
    observer: ReceiverObserver,
    durableQueue: string | undefined,
  ) {
    this.concurrency = concurrency;
    this.#retry = retry;
    this.#counts = counts;
    this.#observer = observer;
    this.#durableQueue = durableQueue;
  }

  /** Registers `handler`; a `TypeError` for the refusals of SPEC 13. */
  add(handler: AnyHandler, options: HandlerOptions | undefined): void {
    const entry = registration(this.handlers, handler, options, this.#durableQueue);
    this.handlers = [...this.handlers, entry];
  }

  /** Removes the last registration of `handler`. */
  remove(handler: AnyHandler): void {
    let index = this.handlers.length - 1;
    while (index >= 0 && this.handlers[index]?.handler !== handler) index--;
    if (index >= 0) this.handlers = this.handlers.toSpliced(index, 1);
  }

  get logger(): Logger {
    return this.#observer.logger;
  }

  addErrorHandler(handler: ErrorHandler): void {
    this.errorHandlers = [...this.errorHandlers, handler];
  }

  input(entry: QueuedAlert): TryInput {
    const { telemetry } = this.#observer;
    return {
      alert: entry.alert,
      id: entry.id,
      receivedAt: entry.receivedAt,
      handlers: this.handlers,
      errorHandlers: this.errorHandlers,
      retry: this.#retry,
      counts: this.#counts,
      observer: this.#observer,
      telemetry,
      link:
        telemetry === undefined || entry.traceContext === undefined
          ? undefined
          : fromTraceCarrier(entry.traceContext),
    };
  }
}

/** An error in a few words, for a log line. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'a non-Error value was thrown';
}

/**
 * Reports one failure that remains after the last try (`attempt`) to the `onError` handlers. It
 * is logged at `error` when no `onError` handler is registered or a logger was given; a throwing
 * or rejecting `onError` is logged at `error` too (with the alert identity and the errors, never
 * options or secrets). Never rejects.
 */
export async function reportFailure(
  input: TryInput,
  attempt: number,
  error: unknown,
  handlerId: string | undefined,
): Promise<void> {
  input.counts.failed++;
  const { observer } = input;
  if (input.errorHandlers.length === 0 || observer.verbose) {
    observer.handlerFailed(input.id, attempt + 1, error, handlerId);
  }
  await callErrorHandlers(input, attempt, error);
}

/**
 * Calls each `onError` handler with `error` (for try `attempt`); one that throws or rejects is
 * logged at `error`. Never rejects.
 */
export async function callErrorHandlers(
  input: TryInput,
  attempt: number,
  error: unknown,
): Promise<void> {
  const { observer } = input;
  const context = contextOf(input, attempt);
  await Promise.all(
    input.errorHandlers.map(async (onError) => {
      try {
        await onError(error, input.alert, context);
      } catch (secondary) {
        observer.logger.error(
          { id: input.id, err: secondary },
          `An onError handler failed for alert ${input.id} (${describe(secondary)}); ` +
            `the handler error was: ${describe(error)}`,
        );
      }
    }),
  );
}

/** Reports each handler failure of the last try (`attempt`) once. Never rejects. */
export async function reportFailures(
  input: TryInput,
  attempt: number,
  failures: readonly FailedHandler[],
): Promise<void> {
  for (const failure of failures) await reportFailure(input, attempt, failure.error, failure.id);
}
