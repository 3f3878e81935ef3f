import type { AlertContext } from '../queue-port/handler-types.js';
import type { TryInput } from '../queue-port/try-types.js';
import { describeError } from '../errors/handlers-failed-error.js';

// Failure reporting, the try protocol's last step: what remains failed after an alert's last try
// goes to the `onError` handlers, once, with the context of that try (built by the caller, the
// try runner or the keep-alive guard).

/**
 * Calls each `onError` handler with `error` and the context of the try it ended with; one that
 * throws or rejects is logged at `error`. Never rejects.
 */
export async function callErrorHandlers(
  input: TryInput,
  context: AlertContext,
  error: unknown,
): Promise<void> {
  const { observer } = input;
  await Promise.all(
    input.errorHandlers.map(async (onError) => {
      try {
        await onError(error, input.alert, context);
      } catch (secondary) {
        observer.logger.error(
          { id: input.id, err: secondary },
          `An onError handler failed for alert ${input.id} (${describeError(secondary)}); ` +
            `the handler error was: ${describeError(error)}`,
        );
      }
    }),
  );
}

/**
 * Reports one failure that remains after the last try (`context.attempt`) to the `onError`
 * handlers. It is logged at `error` when no `onError` handler is registered or a logger was
 * given; a throwing or rejecting `onError` is logged at `error` too (with the alert identity and
 * the errors, never options or secrets). Never rejects.
 */
export async function reportFailure(
  input: TryInput,
  context: AlertContext,
  error: unknown,
  handlerId: string | undefined,
): Promise<void> {
  input.counts.failed++;
  const { observer } = input;
  if (input.errorHandlers.length === 0 || observer.verbose) {
    observer.handlerFailed(input.id, context.attempt + 1, error, handlerId);
  }
  await callErrorHandlers(input, context, error);
}
