import type { Queue } from 'bullmq';
import { TO_WAIT } from './bull-wait.js';
import type { RedisClient } from './connection.js';
import type { AlertJobData } from './job-data.js';

// A retry of a failed alert as one script per alert: whether the job is still failed, the reset
// of core's counters in its data, and its move back to wait happen in one atomic step, so that a
// retry never resets the counters of a job another retry put back and a worker took meanwhile,
// and two retries of one job put it back once.
//
// BullMQ's `job.retry` (its `reprocessJob` script) moves a failed job back atomically, but does
// not write the job's data: the reset would be a second step. So this script does the move as
// `reprocessJob` does it for a job of this store (no priority, no parent), on the keys BullMQ
// names (`queue.keys`, `queue.toKey(name)`) and the job's hash (`queue.toKey(id)`): the `failed`
// sorted set, the move to wait (`toWait` of bull-wait.ts), and the hash's fields
// `data`, `failedReason`, `finishedOn`, `processedOn`, `atm` and `ats` (attempts made and
// started, reset so that the next take is not seen as a takeover). Every key has the queue's
// prefix: one slot of a Redis Cluster when the prefix has a hash tag.
//
// A failure is told apart by the job's score in the failed set (the time it failed, in ms): a
// retry-all puts back the failures of its snapshot, and skips a job that another call put back
// and that failed again since (a new failure, not in its snapshot). The new data is computed here
// from the data read with the failure, and written only if the job's data is still that text
// (compare and set): a job that failed anew within the same millisecond is read again.

/** A failed job to put back, and the score of its failure (`''`: whatever failure it is in). */
export interface Failure {
  id: string;
  score: string;
}

/**
 * KEYS: failed set, then the job hashes. ARGV: job id and failure score, in pairs. For each job:
 * its data if it is in the failed set with that score (any, for `''`), else `''`.
 */
const READ_FAILED = `
local out = {}
for i = 1, #ARGV / 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[2 * i - 1])
  local data = false
  if score and (ARGV[2 * i] == '' or score == ARGV[2 * i]) then
    data = redis.call('HGET', KEYS[i + 1], 'data')
  end
  out[i] = data or ''
end
return out`;

/**
 * KEYS: job hash, failed set, wait list, marker, meta, active list, events stream, and for an
 * alert accepted in order per user its user's line (user-order.ts).
 * ARGV: job id, failure score (`''`: any), the data read, the new data, and with the line the
 * alert's time. The job goes to the end of
 * the wait list (behind the alerts due now, as a retried alert does on every store, also one
 * accepted with `first`), and back in its user's line: a waiting alert like any other.
 * 1: put back; 0: not in that failure (nothing written); -1: failed, but
 * its data changed since it was read (nothing written).
 */
const RETRY_IF_FAILED = `${TO_WAIT}
local jobKey, jobId = KEYS[1], ARGV[1]
local score = redis.call('ZSCORE', KEYS[2], jobId)
if not score or (ARGV[2] ~= '' and score ~= ARGV[2]) then return 0 end
if redis.call('HGET', jobKey, 'data') ~= ARGV[3] then return -1 end
redis.call('ZREM', KEYS[2], jobId)
redis.call('HDEL', jobKey, 'finishedOn', 'processedOn', 'failedReason', 'atm', 'ats')
redis.call('HSET', jobKey, 'data', ARGV[4])
toWait(KEYS[3], 'LPUSH', KEYS[5], KEYS[6], KEYS[4], KEYS[7], jobId, 'failed')
if KEYS[8] then redis.call('ZADD', KEYS[8], ARGV[5], jobId) end
return 1`;

/** How many jobs one read asks about. */
const READ_BATCH = 200;
/** How often a job whose data changed between the read and the retry is read again. */
const MAX_REREADS = 5;

/**
 * The data a retried job gets: core's tries and stalls back to 0 (and `startsBefore` dropped, as
 * BullMQ's attempt counts are reset), the rest kept.
 */
function resetData(text: string): string {
  const { startsBefore: _startsBefore, ...data } = JSON.parse(text) as AlertJobData;
  return JSON.stringify({ ...data, tries: 0, stalls: 0 });
}

/** The failures in the failed set of `queue` now, oldest first: a retry-all's snapshot. */
export async function failedNow(
  queue: Queue<AlertJobData>,
  client: RedisClient,
): Promise<Failure[]> {
  const flat = await client.zrange(queue.toKey('failed'), 0, -1, 'WITHSCORES');
  const failures: Failure[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    failures.push({ id: flat[i] ?? '', score: flat[i + 1] ?? '' });
  }
  return failures;
}

/**
 * Puts the failed jobs `failures` of `queue` back in wait through `client`, each in one atomic
 * step with its counters reset (see above). Skips a job that is not in that failure (any more);
 * resolves with the ids it put back.
 */
export async function retryFailedJobs(
  queue: Queue<AlertJobData>,
  client: RedisClient,
  failures: readonly Failure[],
  lineKey: (user: string) => string,
): Promise<string[]> {
  const retried: string[] = [];
  for (let start = 0; start < failures.length; start += READ_BATCH) {
    let batch = failures.slice(start, start + READ_BATCH);
    for (let round = 0; batch.length > 0; round++) {
      const changed: Failure[] = [];
      const datas = (await client.eval(
        READ_FAILED,
        batch.length + 1,
        queue.toKey('failed'),
        ...batch.map(({ id }) => queue.toKey(id)),
        ...batch.flatMap(({ id, score }) => [id, score]),
      )) as string[];
      for (const [i, failure] of batch.entries()) {
        const data = datas[i];
        if (data === undefined || data === '') continue; // not (in that failure) any more
        const result = await retryIfFailed(queue, client, failure, data, lineKey);
        if (result === 1) retried.push(failure.id);
        else if (result === -1) changed.push(failure);
      }
      if (changed.length > 0 && round >= MAX_REREADS) {
        throw new Error(
          `The data of a failed job kept changing during its retry: ${changed[0]?.id ?? ''}.`,
        );
      }
      batch = changed;
    }
  }
  return retried;
}

async function retryIfFailed(
  queue: Queue<AlertJobData>,
  client: RedisClient,
  { id, score }: Failure,
  data: string,
  lineKey: (user: string) => string,
): Promise<number> {
  const key = (type: string): string => queue.toKey(type);
  const { order } = JSON.parse(data) as AlertJobData;
  const keys = [
    key(id),
    key('failed'),
    key('wait'),
    key('marker'),
    key('meta'),
    key('active'),
    key('events'),
    ...(order === undefined ? [] : [lineKey(order.user)]),
  ];
  const args = [id, score, data, resetData(data), ...(order === undefined ? [] : [order.at])];
  return (await client.eval(RETRY_IF_FAILED, keys.length, ...keys, ...args)) as number;
}
