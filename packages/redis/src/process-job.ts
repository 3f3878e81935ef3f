import type { AlertProcessor, HandlerFailure } from '@churn-risk/core';
import type { Job } from 'bullmq';
import { toQueuedAlert, type AlertJobData } from './job-data.js';

/** The error a job fails a try with: names the handlers that failed and their first message. */
export class HandlersFailedError extends Error {
  override readonly name = 'HandlersFailedError';
  /** Registration indexes of the handlers that failed this try. */
  readonly handlers: readonly number[];

  constructor(failures: readonly HandlerFailure[]) {
    const first = failures[0]?.error;
    const detail =
      first instanceof Error
        ? `${first.name}: ${first.message}`
        : typeof first === 'string'
          ? first
          : 'a non-Error value was thrown';
    const which = failures.map((f) => f.index).join(', ');
    super(`${failures.length} handler(s) failed (index ${which}): ${detail}`, { cause: first });
    this.handlers = failures.map((f) => f.index);
  }
}

/**
 * One try of an alert's job: runs the handlers that have not succeeded yet; records the ones that
 * succeeded now (so a retry does not run them again); after the last try, reports to `onError`
 * once; and throws so that BullMQ schedules the retry as a delayed job, or moves the job to the
 * failed set.
 */
export async function processAlertJob(
  processor: AlertProcessor,
  job: Job<AlertJobData>,
): Promise<void> {
  const data = job.data;
  const entry = toQueuedAlert(data);
  const attempt = job.attemptsMade;
  const done = new Set(data.succeeded ?? []);
  const { failures, succeeded } = await processor.runTry(entry, attempt, done);
  if (failures.length === 0) return;
  if (succeeded.length > done.size) await job.updateData({ ...data, succeeded: [...succeeded] });
  const attempts = job.opts.attempts ?? 1;
  if (attempt + 1 >= attempts) await processor.reportFailures(entry, attempt, failures);
  throw new HandlersFailedError(failures);
}
