import { AlertStalledError, type ChurnRiskAlert } from '@churn-risk/core';
import type { Job, Queue } from 'bullmq';
import type { AlertJobData } from './job-data.js';

/** An alert whose handlers failed after their retries, as `queue.failed()` lists it. */
export interface FailedAlert {
  /** The BullMQ job id: what `retry(id)` takes. */
  id: string;
  /** The alert identity `userId:triggeredAt`. */
  alertId: string;
  alert: ChurnRiskAlert;
  /**
   * The last try's error message: it names the handlers that failed by id (`Handler crm failed:
   * ...`), or says that the alert stalled (its worker died mid-alert more than `maxStalls` times).
   */
  error: string;
  /** Ids of the handlers that had succeeded for it (they are skipped when it is retried). */
  succeededHandlers: string[];
  /** Tries made. */
  tries: number;
  /** When the receiver accepted it. */
  receivedAt: Date;
  /** When the last try failed. */
  failedAt: Date | undefined;
}

/** Options of `queue.failed()`. */
export interface FailedListOptions {
  /** At most this many, newest first. Default 50. */
  limit?: number;
  /** Skip this many. Default 0. */
  offset?: number;
}

/** Job counts by state, as `queue.counts()` gives them. */
export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/** BullMQ's reason for a job whose worker died more than `maxStalledCount` times. */
const STALLED_REASON = 'job stalled more than allowable limit';

export function toFailedAlert(job: Job<AlertJobData>): FailedAlert {
  return {
    id: String(job.id),
    alertId: job.data.id,
    alert: job.data.alert,
    error:
      job.failedReason === STALLED_REASON
        ? new AlertStalledError(job.stalledCounter).message
        : job.failedReason,
    succeededHandlers: job.data.handlers ?? [],
    tries: job.data.tries ?? job.attemptsMade,
    receivedAt: new Date(job.data.receivedAt),
    failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn),
  };
}

/** Lists failed alerts, newest first. */
export async function listFailed(
  queue: Queue<AlertJobData>,
  options: FailedListOptions = {},
): Promise<FailedAlert[]> {
  const limit = options.limit ?? 50;
  const offset = options.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be at least 1.');
  if (!Number.isInteger(offset) || offset < 0) throw new TypeError('offset must be at least 0.');
  const jobs = await queue.getFailed(offset, offset + limit - 1);
  return jobs.map(toFailedAlert);
}

/** Counts of the queue's jobs by state. */
export async function countJobs(queue: Queue<AlertJobData>): Promise<QueueCounts> {
  const counts = await queue.getJobCounts(
    'waiting',
    'prioritized',
    'active',
    'delayed',
    'failed',
    'completed',
  );
  return {
    waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    failed: counts.failed ?? 0,
    completed: counts.completed ?? 0,
  };
}
