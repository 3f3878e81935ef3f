/**
 * The hand-written reference of `pnpm bench redis`: the job's minimum done in the route itself
 * (`lib/hand-queue-route.ts`), then BullMQ's `queue.add` with a job id and de-duplication on the
 * alert identity, i.e. the same Redis work as the receiver's Redis queue (one Lua script: the
 * identity SET NX PX and the job).
 */
import { randomUUID } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import { handEnqueue, type HandEnqueue } from '../lib/hand-queue-route.js';

const HOUR_MS = 3_600_000;
/** What a production route would set; the same size of job options as the receiver's queue. */
const JOB_OPTIONS: JobsOptions = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 72 * 3600 },
  removeOnFail: { age: 30 * 24 * 3600 },
};
const DEDUPE_TTL_MS = 72 * HOUR_MS;

/** A BullMQ queue on `redisUrl` under `prefix`, and the route's work on it. */
export function handBullmq(redisUrl: string, prefix: string): HandEnqueue {
  const { hostname, port } = new URL(redisUrl);
  const connection = { host: hostname, port: Number(port) };
  const queue = new Queue('alerts', { connection, prefix });
  return handEnqueue(async (alert, id) => {
    const jobId = randomUUID();
    const job = await queue.add(
      'churn_risk_alert',
      { id, alert, receivedAt: Date.now() },
      { ...JOB_OPTIONS, jobId, deduplication: { id, ttl: DEDUPE_TTL_MS } },
    );
    return job.id === jobId ? 'accepted' : 'duplicate';
  });
}
