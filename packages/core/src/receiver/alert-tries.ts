import { HandlersFailedError } from '../errors/handlers-failed-error.js';
import type { HandlerFailure, TakenAlert, TryVerdict } from './alert-queue.js';
import { tryHandlers } from './handler-try.js';
import { reportFailure, reportFailures } from './report-failure.js';
import { sleep } from './retry-policy.js';
import type { TryInput } from './try-input.js';
import { isThenable } from './work-queue.js';

// The try protocol (SPEC 13), one for every queue: a try runs the handlers that have not
// succeeded for the alert; the ones that did are recorded; a failure is tried again after the
// retry policy's delay; after the last try each handler that still fails goes to `onError` once
// and the alert is failed. An in-process queue runs all of an alert's tries in `runAlert` (the
// waits are timers, the record is a set of indexes); a durable queue runs one try per job in
// `runTakenTry` and stores the verdict (the waits are delayed jobs, the record is handler ids).

const COMPLETED: TryVerdict = Object.freeze({ outcome: 'completed' });

/** Adds to `done` the handlers of `input` that were tried and did not fail. */
function markSucceeded(
  input: TryInput,
  done: Set<number>,
  failures: readonly HandlerFailure[],
): void {
  const failed = new Set(failures.map((failure) => failure.index));
  for (let index = 0; index < input.handlers.length; index++) {
    if (!failed.has(index)) done.add(index);
  }
}

/** After a first try with failures: the retries in this process, then the report. */
async function retryInProcess(
  input: TryInput,
  firstFailures: readonly HandlerFailure[],
): Promise<number> {
  let failures = firstFailures;
  const done = new Set<number>();
  markSucceeded(input, done, failures);
  let attempt = 0;
  while (attempt < input.retry.retries) {
    await sleep(input.retry.delayMs(attempt + 1));
    attempt += 1;
    failures = await tryHandlers(input, attempt, done);
    if (failures.length === 0) return 0;
    markSucceeded(input, done, failures);
  }
  await reportFailures(input, attempt, failures);
  return failures.length;
}

/**
 * Every try of an alert in this process (an in-process queue). Never throws or rejects; gives the
 * number of handlers that failed after their retries, synchronously when the first try's handlers
 * all returned synchronously and succeeded.
 */
export function runAlert(input: TryInput): number | Promise<number> {
  const first = tryHandlers(input, 0, undefined);
  if (!isThenable(first)) return first.length === 0 ? 0 : retryInProcess(input, first);
  return first.then((failures) => (failures.length === 0 ? 0 : retryInProcess(input, failures)));
}

/**
 * One try of an alert a durable queue took: the handlers whose id is not recorded run; the verdict
 * says what to store. A handler without an id (only possible when it is the alert's only handler)
 * is never recorded, so it runs on every try until it succeeds. Never rejects.
 */
export async function runTakenTry(input: TryInput, taken: TakenAlert): Promise<TryVerdict> {
  const recorded = new Set(taken.succeeded);
  const skip = new Set<number>();
  input.handlers.forEach((entry, index) => {
    if (entry.id !== undefined && recorded.has(entry.id)) skip.add(index);
  });
  const failures = await tryHandlers(input, taken.attempt, skip);
  if (failures.length === 0) return COMPLETED;
  const failed = new Set(failures.map((failure) => failure.index));
  const succeeded = [...taken.succeeded];
  input.handlers.forEach((entry, index) => {
    if (entry.id !== undefined && !failed.has(index) && !recorded.has(entry.id)) {
      succeeded.push(entry.id);
    }
  });
  const error = new HandlersFailedError(failures);
  if (taken.attempt < input.retry.retries) {
    const delayMs = input.retry.delayMs(taken.attempt + 1);
    return { outcome: 'retry', delayMs, error, succeeded };
  }
  await reportFailures(input, taken.attempt, failures);
  return { outcome: 'failed', error, succeeded };
}

/** An alert a durable queue failed without a try: `onError` once. Never rejects. */
export function giveUpAlert(input: TryInput, attempt: number, error: Error): Promise<void> {
  return reportFailure(input, attempt, error, undefined);
}
