/**
 * The hand-written reference of `pnpm bench redis`: the job's minimum done in the route itself,
 * then BullMQ's `queue.add` with a job id and de-duplication on the alert identity, i.e. the same
 * Redis work as the receiver's Redis queue (one Lua script: the identity SET NX PX and the job).
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import { SECRET } from '../lib/alert.js';

const HOUR_MS = 3_600_000;
/** What a production route would set; the same size of job options as the receiver's queue. */
const JOB_OPTIONS: JobsOptions = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 72 * 3600 },
  removeOnFail: { age: 30 * 24 * 3600 },
};
const DEDUPE_TTL_MS = 72 * HOUR_MS;

export interface HandAnswer {
  status: number;
  body: Record<string, unknown>;
}

const ACCEPTED: HandAnswer = { status: 202, body: { received: true } };
const DUPLICATE: HandAnswer = { status: 202, body: { received: true, duplicate: true } };
const INVALID: HandAnswer = { status: 401, body: { error: { code: 'INVALID_SIGNATURE' } } };
const UNAVAILABLE: HandAnswer = { status: 503, body: { error: { code: 'OVERLOADED' } } };

interface Alert {
  event?: unknown;
  userId?: unknown;
  triggeredAt?: unknown;
}

/**
 * `handVerified` of `lib/hand-check.ts` (HMAC over `timestamp.body`, `timingSafeEqual`, the 300 s
 * tolerance, `JSON.parse`), returning the parsed alert, which a route needs for the job (calling
 * `handVerified` and parsing a second time would handicap the reference).
 */
function verifiedAlert(body: unknown, signature?: string, timestamp?: string): Alert | undefined {
  if (!Buffer.isBuffer(body) || signature === undefined || timestamp === undefined) return;
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith('sha256=')) return;
  const given = Buffer.from(signature.slice(7), 'hex');
  const mac = createHmac('sha256', SECRET).update(timestamp).update('.').update(body).digest();
  if (given.length !== mac.length || !timingSafeEqual(given, mac)) return;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return;
  const alert = JSON.parse(body.toString('utf8')) as Alert;
  return alert.event === 'churn_risk_alert' ? alert : undefined;
}

/** The route's work after the framework has read the raw body: verify, then one `queue.add`. */
export type HandEnqueue = (
  body: unknown,
  signature: string | undefined,
  timestamp: string | undefined,
) => Promise<HandAnswer>;

/**
 * A BullMQ queue on `redisUrl` under `prefix`, and the route's work on it. `enableAutoPipelining`:
 * ioredis sends the commands of one event-loop turn in one write (an exploration, see servers.ts).
 */
export function handEnqueue(
  redisUrl: string,
  prefix: string,
  enableAutoPipelining = false,
): HandEnqueue {
  const { hostname, port } = new URL(redisUrl);
  const connection = { host: hostname, port: Number(port), enableAutoPipelining };
  const queue = new Queue('alerts', { connection, prefix });
  return async (body, signature, timestamp) => {
    let alert: Alert | undefined;
    try {
      alert = verifiedAlert(body, signature, timestamp);
    } catch {
      alert = undefined; // JSON that does not parse
    }
    if (alert === undefined) return INVALID;
    const id = `${String(alert.userId)}:${String(alert.triggeredAt)}`;
    const jobId = randomUUID();
    try {
      const job = await queue.add(
        'churn_risk_alert',
        { id, alert, receivedAt: Date.now() },
        { ...JOB_OPTIONS, jobId, deduplication: { id, ttl: DEDUPE_TTL_MS } },
      );
      return job.id === jobId ? ACCEPTED : DUPLICATE;
    } catch {
      return UNAVAILABLE;
    }
  };
}
