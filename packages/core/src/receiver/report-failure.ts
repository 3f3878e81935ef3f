import type { RunHandlersInput } from './run-handlers.js';
import type { AlertContext } from './types.js';

/** An error in a few words, for a log line. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'a non-Error value was thrown';
}

/**
 * Reports a failure to the `onError` handlers. It is logged at `error` when no `onError` handler
 * is registered or a logger was given; a throwing or rejecting `onError` is logged at `error` too
 * (with the alert identity and the errors, never options or secrets).
 */
export async function report(
  error: unknown,
  input: RunHandlersInput,
  context: AlertContext,
): Promise<void> {
  input.counts.failed++;
  const { observer } = input;
  if (input.errorHandlers.length === 0 || observer.verbose) {
    observer.handlerFailed(input.id, context.attempt + 1, error);
  }
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
