import type { SpanContext } from '@opentelemetry/api';
import type { ReceiverObserver } from '../observability/receiver-observer.js';
import type { ReceiverTelemetry, TryRecord } from '../observability/telemetry.js';
import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { HandlerFailure } from './alert-queue.js';
import { sleep, type RetryPolicy } from './retry-policy.js';
import { tryOnce } from './handler-try.js';
import { report } from './report-failure.js';
import { isThenable } from './work-queue.js';
import type { AlertContext, ErrorHandler } from './types.js';

/** A handler as the dispatcher sees it (the event map is erased here). */
export type AnyHandler = (payload: ChurnRiskAlert, context: AlertContext) => unknown;

/** What an alert's processing needs: the queued alert, plus the receiver's handlers and policy. */
export interface RunHandlersInput {
  alert: ChurnRiskAlert;
  id: string;
  /** Milliseconds since the epoch (a `Date` is made per context, as handlers may keep it). */
  receivedAt: number;
  handlers: readonly AnyHandler[];
  errorHandlers: readonly ErrorHandler[];
  retry: RetryPolicy;
  /** Counts handler runs that failed after their retries (the receiver's `stats.failed`). */
  counts: { failed: number };
  /** The receiver's logger and listeners. */
  observer: ReceiverObserver;
  /** OpenTelemetry, when `@opentelemetry/api` is installed. */
  telemetry: ReceiverTelemetry | undefined;
  /** The delivery's `receive` span, which each try's `process` span links to. */
  link: SpanContext | undefined;
}

export function contextOf(input: RunHandlersInput, attempt: number): AlertContext {
  return {
    id: input.id,
    receivedAt: new Date(input.receivedAt),
    attempt,
    event: 'churn_risk_alert',
  };
}

const succeeded = (): boolean => true;

/**
 * Runs one handler with its retries; `true` when it finally succeeded. A handler that returns
 * without a promise and does not throw is done at once: no promise is made for it.
 */
function runOne(handler: AnyHandler, input: RunHandlersInput): boolean | Promise<boolean> {
  const context = contextOf(input, 0);
  const record = input.telemetry?.startTry(input.link, input.id, 0);
  if (record !== undefined) return runTraced(handler, input, context, record);
  let returned: unknown;
  try {
    returned = handler(input.alert, context);
  } catch (error) {
    return retry(handler, input, error, context);
  }
  if (!isThenable(returned)) return true;
  return Promise.resolve(returned).then(succeeded, (error: unknown) =>
    retry(handler, input, error, context),
  );
}

/** `runOne`'s first try inside its `process` span (an OpenTelemetry SDK is recording). */
function runTraced(
  handler: AnyHandler,
  input: RunHandlersInput,
  context: AlertContext,
  record: TryRecord,
): boolean | Promise<boolean> {
  const telemetry = input.telemetry as ReceiverTelemetry;
  const failed = (error: unknown): Promise<boolean> => {
    telemetry.endTry(record, true, error);
    return retry(handler, input, error, context);
  };
  let returned: unknown;
  try {
    returned = telemetry.runInTry(record, () => handler(input.alert, context));
  } catch (error) {
    return failed(error);
  }
  const ok = (): boolean => {
    telemetry.endTry(record, false);
    return true;
  };
  return isThenable(returned) ? Promise.resolve(returned).then(ok, failed) : ok();
}

/** After a failed try (`failed` is its context): the retries, then `onError` if all fail. */
async function retry(
  handler: AnyHandler,
  input: RunHandlersInput,
  error: unknown,
  failed: AlertContext,
): Promise<boolean> {
  let lastError = error;
  let context = failed;
  while (context.attempt < input.retry.retries) {
    await sleep(input.retry.delayMs(context.attempt + 1));
    context = contextOf(input, context.attempt + 1);
    const outcome = await tryOnce(handler, input, context);
    if (outcome === undefined) return true;
    lastError = outcome.error;
  }
  await report(lastError, input, context);
  return false;
}

const countFailed = (outcomes: readonly boolean[]): number =>
  outcomes.reduce((failed, ok) => (ok ? failed : failed + 1), 0);

/**
 * Runs every handler of an alert side by side; each retries and fails on its own. Never throws or
 * rejects; gives the number of handlers that failed after their retries: at once when every
 * handler returned synchronously, else through a promise.
 */
export function runHandlers(input: RunHandlersInput): number | Promise<number> {
  const { handlers } = input;
  if (handlers.length === 1) {
    const outcome = runOne(handlers[0] as AnyHandler, input); // the usual case, no arrays
    if (typeof outcome === 'boolean') return outcome ? 0 : 1;
    return outcome.then((ok) => (ok ? 0 : 1));
  }
  const outcomes = handlers.map((handler) => runOne(handler, input));
  if (outcomes.every((outcome): outcome is boolean => typeof outcome === 'boolean')) {
    return countFailed(outcomes);
  }
  return Promise.all(outcomes.map((outcome) => Promise.resolve(outcome))).then(countFailed);
}

/**
 * One try (`attempt`) of every handler whose index is not in `skip`, side by side, for a queue
 * that schedules retries itself. Never rejects; gives the handlers that failed.
 */
export async function tryHandlers(
  input: RunHandlersInput,
  attempt: number,
  skip: ReadonlySet<number>,
): Promise<HandlerFailure[]> {
  const context = contextOf(input, attempt);
  const failures: HandlerFailure[] = [];
  await Promise.all(
    input.handlers.map(async (handler, index) => {
      if (skip.has(index)) return;
      const outcome = await tryOnce(handler, input, context);
      if (outcome !== undefined) failures.push({ index, error: outcome.error });
    }),
  );
  return failures.sort((a, b) => a.index - b.index);
}

/** Reports each failure that remains after the last try to the `onError` handlers. */
export async function reportFailures(
  input: RunHandlersInput,
  attempt: number,
  failures: readonly HandlerFailure[],
): Promise<void> {
  const context = contextOf(input, attempt);
  for (const failure of failures) await report(failure.error, input, context);
}
