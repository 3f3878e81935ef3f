import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import { sleep, type RetryPolicy } from './retry-policy.js';
import { isThenable } from './work-queue.js';
import type { AlertContext, ErrorHandler } from './types.js';

/** A handler as the dispatcher sees it (the event map is erased here). */
export type AnyHandler = (payload: ChurnRiskAlert, context: AlertContext) => unknown;

/** What an alert's processing needs. */
export interface RunHandlersInput {
  alert: ChurnRiskAlert;
  id: string;
  receivedAt: Date;
  handlers: readonly AnyHandler[];
  errorHandlers: readonly ErrorHandler[];
  retry: RetryPolicy;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'a non-Error value was thrown';
}

/**
 * Reports a failure to the `onError` handlers. A throwing or rejecting `onError` (or none at all)
 * falls back to `console.error` with the alert identity and the error, never options or secrets.
 */
async function report(
  error: unknown,
  input: RunHandlersInput,
  context: AlertContext,
): Promise<void> {
  if (input.errorHandlers.length === 0) {
    console.error(
      `[churn-risk] A handler of alert ${input.id} failed after ${context.attempt + 1} tries:`,
      error,
    );
    return;
  }
  await Promise.all(
    input.errorHandlers.map(async (onError) => {
      try {
        await onError(error, input.alert, context);
      } catch (secondary) {
        console.error(
          `[churn-risk] An onError handler failed for alert ${input.id} (${describe(secondary)}); ` +
            `the handler error was: ${describe(error)}`,
        );
      }
    }),
  );
}

function contextOf(input: RunHandlersInput, attempt: number): AlertContext {
  return { id: input.id, receivedAt: input.receivedAt, attempt, event: 'churn_risk_alert' };
}

const succeeded = (): boolean => true;

/**
 * Runs one handler with its retries; `true` when it finally succeeded. A handler that returns
 * without a promise and does not throw is done at once: no promise is made for it.
 */
function runOne(handler: AnyHandler, input: RunHandlersInput): boolean | Promise<boolean> {
  const context = contextOf(input, 0);
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
    try {
      await handler(input.alert, context);
      return true;
    } catch (next) {
      lastError = next;
    }
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
