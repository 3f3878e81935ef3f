import type { Job, Queue } from 'bullmq';
import type { RedisClient } from './connection.js';
import type { AlertJobData } from './job-data.js';

// Replaces the job's data only while the lock still holds this worker's token, in one script: a
// worker that lost its lock (its alert was taken over by another process) cannot overwrite the
// record of succeeded handlers the new holder wrote. Both keys share the queue's prefix, so they
// land in one slot of a Redis Cluster when the prefix has a hash tag.
const WRITE_IF_LOCKED = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return 1`;

// Clears the count of a failed job's stalls (BullMQ's `stc`, which its retry keeps), only while
// the job is in the failed set: a job another process has retried meanwhile is left alone.
const FORGET_STALLS = `
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('HDEL', KEYS[1], 'stc')
return 1`;

/** The Redis commands a worker needs beyond BullMQ's. */
export interface JobStore {
  /**
   * Stores `data` as the job's data if `token` still holds the job's lock; `false` (nothing
   * written) when the lock was lost or the job is gone.
   */
  writeIfLocked(job: Job<AlertJobData>, token: string, data: AlertJobData): Promise<boolean>;
  /**
   * Forgets how many times a failed job stalled, so that a retried alert gets `maxStalls` afresh;
   * `false` (nothing changed) when the job is not in the failed set.
   */
  forgetStalls(job: Job<AlertJobData>): Promise<boolean>;
}

/** The job store of `queue` (its keys), through `client`. */
export function jobStore(queue: Queue<AlertJobData>, client: RedisClient): JobStore {
  return {
    async writeIfLocked(job, token, data) {
      const jobKey = queue.toKey(String(job.id));
      const lockKey = `${jobKey}:lock`;
      const written = await client.eval(
        WRITE_IF_LOCKED,
        2,
        jobKey,
        lockKey,
        token,
        JSON.stringify(data),
      );
      return written === 1;
    },
    async forgetStalls(job) {
      const id = String(job.id);
      const cleared = await client.eval(
        FORGET_STALLS,
        2,
        queue.toKey(id),
        queue.toKey('failed'),
        id,
      );
      return cleared === 1;
    },
  };
}
