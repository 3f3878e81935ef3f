import type { ReceiverTelemetry, TryRecord } from '../observability/telemetry.js';
import type { HandlerFailure } from './alert-queue.js';
import type { HandlerRegistration } from './handler-registration.js';
import { contextOf, type TryInput } from './try-input.js';
import type { AlertContext } from './types.js';
import { isThenable } from './work-queue.js';

type Outcome = { error: unknown } | undefined;
const succeeded = (): undefined => undefined;
const failedWith = (error: unknown): Outcome => ({ error });
/** No failure: shared, so that a try where every handler succeeds allocates no array. */
const NONE: readonly HandlerFailure[] = Object.freeze([]);

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
 * One try (`attempt`, 0 for the first) of the alert's handlers whose index is not in `skip`, side
 * by side. Never throws or rejects; gives the handlers that failed, in registration order. When
 * every handler returns without a promise the answer is synchronous, and a try where all succeed
 * allocates nothing but the context.
 */
export function tryHandlers(
  input: TryInput,
  attempt: number,
  skip: ReadonlySet<number> | undefined,
): readonly HandlerFailure[] | Promise<readonly HandlerFailure[]> {
  const { handlers } = input;
  const context = contextOf(input, attempt);
  let failures: HandlerFailure[] | undefined;
  let pending: Promise<void>[] | undefined;
  for (let index = 0; index < handlers.length; index++) {
    if (skip?.has(index) === true) continue;
    const entry = handlers[index] as HandlerRegistration;
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
  if (pending === undefined) return failures ?? NONE;
  return Promise.all(pending).then(() =>
    failures === undefined ? NONE : failures.sort((a, b) => a.index - b.index),
  );
}
