import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import { sleep, type RetryPolicy } from './retry-policy.js';
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

/** Runs one handler with its retries; resolves `true` when it finally succeeded. */
async function runOne(handler: AnyHandler, input: RunHandlersInput): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const context: AlertContext = {
      id: input.id,
      receivedAt: input.receivedAt,
      attempt,
      event: 'churn_risk_alert',
    };
    try {
      await handler(input.alert, context);
      return true;
    } catch (error) {
      if (attempt >= input.retry.retries) {
        await report(error, input, context);
        return false;
      }
    }
    await sleep(input.retry.delayMs(attempt + 1));
  }
}

/**
 * Runs every handler of an alert side by side; each retries and fails on its own. Never rejects;
 * resolves with the number of handlers that failed after their retries.
 */
export async function runHandlers(input: RunHandlersInput): Promise<number> {
  const only = input.handlers.length === 1 ? input.handlers[0] : undefined;
  if (only !== undefined) return (await runOne(only, input)) ? 0 : 1; // the usual case, no arrays
  const outcomes = await Promise.all(input.handlers.map((handler) => runOne(handler, input)));
  return outcomes.filter((ok) => !ok).length;
}
