import {
  type AlertRecord,
  resolveFailedListOptions,
  type FailedListOptions,
  type QueueCounts,
} from '@churn-risk/core/store';
import type { Job, Queue } from 'bullmq';
import type { AlertJobData } from './job-data.js';

/** A failed job as `failed()` lists it. */
export function failedRecord(job: Job<AlertJobData>): AlertRecord<'failed'> {
  const {
    stalls: _stalls,
    dueAt: _dueAt,
    order: _order,
    startsBefore: _startsBefore,
    ...record
  } = job.data;
  return { ...record, jobId: String(job.id), error: job.failedReason, failedAt: job.finishedOn };
}

/** Lists failed alerts, newest first. */
export async function listFailed(
  queue: Queue<AlertJobData>,
  options: FailedListOptions = {},
): Promise<AlertRecord<'failed'>[]> {
  const { limit, offset } = resolveFailedListOptions(options);
  const jobs = await queue.getFailed(offset, offset + limit - 1);
  return jobs.map(failedRecord);
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
