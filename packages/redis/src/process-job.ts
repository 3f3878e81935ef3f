import type { AlertProcessor } from '@churn-risk/core';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { toQueuedAlert, type AlertJobData } from './job-data.js';
import type { JobStore } from './job-store.js';

/** A worker's try could not be stored: another process took the alert over meanwhile. */
export class LockLostError extends Error {
  override readonly name = 'LockLostError';
}

/**
 * One try of an alert's job. Core runs the try and decides (`processor.runTry`); this only stores
 * the verdict: nothing for a completed alert (BullMQ completes the job when this returns), else
 * the record of tries and succeeded handler ids (only while the lock is ours), then a delayed job
 * for a retry, or the failed set.
 */
export async function processAlertJob(
  processor: AlertProcessor,
  job: Job<AlertJobData>,
  token: string,
  store: JobStore,
): Promise<void> {
  const { succeeded: _legacyKeys, ...data } = job.data;
  const attempt = data.tries ?? job.attemptsMade;
  const verdict = await processor.runTry({
    entry: toQueuedAlert(data),
    attempt,
    succeeded: data.handlers ?? [],
  });
  if (verdict.outcome === 'completed') return;
  const next: AlertJobData = { ...data, tries: attempt + 1, handlers: [...verdict.succeeded] };
  if (!(await store.writeIfLocked(job, token, next))) {
    throw new LockLostError(
      `Alert ${data.id}: the try's outcome was not stored, as another process took the alert over.`,
    );
  }
  if (verdict.outcome === 'retry') {
    await job.moveToDelayed(Date.now() + verdict.delayMs, token);
    throw new DelayedError();
  }
  throw new UnrecoverableError(verdict.error.message);
}
