import type { RedisClient } from './connection.js';
import type { AlertJobData } from './job-data.js';

// Replaces a job's data only while its lock still holds `token`, in one script: a taker that lost
// its lease (its alert was taken over) cannot overwrite the record the new holder wrote. BullMQ's
// API has no fenced data write (`job.updateData` is not fenced), so this relies on BullMQ's key
// layout (as retry-failed.ts and the order's scripts in user-order.ts do): the job hash's `data`
// field and the job's `<job key>:lock` key, as BullMQ's own Lua scripts use them. Both keys share
// the queue's prefix, so they land in one slot of a Redis Cluster when the prefix has a hash tag.
const WRITE_IF_LEASED = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return 1`;

/**
 * Stores `data` as the data of the job whose key is `jobKey` (BullMQ's `queue.toKey(id)`) if
 * `token` holds the job's lock, through `client` (the connection the job's other writes use, so
 * that they reach Redis in order). `false` (nothing written) when the lock is another token's, or
 * gone.
 */
export async function writeDataIfLeased(
  client: RedisClient,
  jobKey: string,
  token: string,
  data: AlertJobData,
): Promise<boolean> {
  const written = await client.eval(
    WRITE_IF_LEASED,
    2,
    jobKey,
    `${jobKey}:lock`,
    token,
    JSON.stringify(data),
  );
  return written === 1;
}
