import type { Worker } from 'bullmq';
import type { AlertJobData } from './job-data.js';

/**
 * How long BullMQ's `stalled-check` key lives after a check, in ms: the consumer worker's
 * `stalledInterval`, which BullMQ uses for nothing else here (its own check timer never runs).
 */
export const CHECK_KEY_TTL_MS = 1;
/** The wait between the two passes of a reclaim: longer than the key lives, on any clock. */
const SECOND_PASS_AFTER_MS = 5;

/**
 * Puts back, due now, every alert whose lease had expired when it was called, whatever other
 * processes do meanwhile; resolves with how many it moved. It runs BullMQ's stalled check twice,
 * through BullMQ's public backend interface (`worker.getBackend().moveStalledJobsToWait()`,
 * `IQueueBackend`).
 *
 * Why twice, and why the check key lives 1 ms. BullMQ's check (`moveStalledJobsToWait`, one Lua
 * script) has two phases and a gate:
 * - gate: it does nothing while the `stalled-check` key exists; when it runs, it sets the key for
 *   `stalledInterval` ms;
 * - phase 1: every job in the `stalled` set whose lock is gone goes back to wait (and is counted);
 * - phase 2: every active job is put in the `stalled` set (a lock renewal takes it out again).
 *
 * So one check moves only the jobs that an earlier check marked, and with BullMQ's default a
 * check is skipped for a whole interval after any other: a timer that fires a millisecond early,
 * or a second process, skips checks, and a dead worker's job waited up to two intervals after its
 * lock expired plus one more when it was not marked yet.
 *
 * Here the key lives `CHECK_KEY_TTL_MS` (1 ms) and a reclaim runs the check, waits
 * `SECOND_PASS_AFTER_MS` (5 ms, longer than the key lives), and runs it again. Take a job J whose
 * lock expired before the reclaim started:
 * - if the first pass runs, J is moved (it was marked) or marked (it was not); if it is skipped,
 *   another check ran within the last millisecond and did the same;
 * - the second pass runs after the first pass's key expired, so if it runs, J, marked by then and
 *   still without a lock, is moved; if it is skipped, a check of another process ran in the
 *   millisecond before it, that is after the first pass, and moved J.
 * Either way J is back in wait when the reclaim resolves. A reclaim therefore does the whole job
 * at every call, from any number of processes at any phase, and a dead taker's alert is taken
 * over at most `leaseMs + reclaimIntervalMs` after its last lease renewal (plus the milliseconds
 * of the reclaim and the take): core calls a reclaim every `reclaimIntervalMs` in every consuming
 * process. A job whose lock is still held is marked and stays active; its next renewal unmarks it.
 */
export async function reclaimExpiredJobs(worker: Worker<AlertJobData>): Promise<number> {
  const backend = worker.getBackend();
  const first = await backend.moveStalledJobsToWait();
  await new Promise((resolve) => setTimeout(resolve, SECOND_PASS_AFTER_MS));
  const second = await backend.moveStalledJobsToWait();
  return first.length + second.length;
}
