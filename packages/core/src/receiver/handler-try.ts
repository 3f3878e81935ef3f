import type { ReceiverTelemetry } from '../observability/telemetry.js';
import type { AnyHandler, RunHandlersInput } from './run-handlers.js';
import type { AlertContext } from './types.js';

/** One awaited try, in its `process` span when tracing: `undefined` or what it threw. */
export async function tryOnce(
  handler: AnyHandler,
  input: RunHandlersInput,
  context: AlertContext,
): Promise<{ error: unknown } | undefined> {
  const { telemetry } = input;
  const record = telemetry?.startTry(input.link, input.id, context.attempt);
  try {
    if (record === undefined) await handler(input.alert, context);
    else
      await (telemetry as ReceiverTelemetry).runInTry(record, () => handler(input.alert, context));
  } catch (error) {
    telemetry?.endTry(record, true, error);
    return { error };
  }
  telemetry?.endTry(record, false);
  return undefined;
}
