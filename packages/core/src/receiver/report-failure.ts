import type { HandlerFailure } from './alert-queue.js';
import { contextOf, type TryInput } from './try-input.js';

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

/** Reports each failure of the last try (`attempt`) once. Never rejects. */
export async function reportFailures(
  input: TryInput,
  attempt: number,
  failures: readonly HandlerFailure[],
): Promise<void> {
  for (const failure of failures) await reportFailure(input, attempt, failure.error, failure.id);
}
