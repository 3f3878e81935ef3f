import type { WorkQueue } from './work-queue.js';

/**
 * Waits until the queue is idle. With `timeoutMs`, rejects with an `Error` that says how much work
 * is still in flight once that time has passed (the work itself goes on).
 */
export function drainQueue(queue: WorkQueue, timeoutMs: number | undefined): Promise<void> {
  if (timeoutMs === undefined) return queue.idle();
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    return Promise.reject(new TypeError('timeoutMs must be a non-negative number.'));
  }
  const stop = new AbortController();
  const idle = queue.idle(stop.signal);
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop.abort(); // forget this wait: a drain that timed out keeps nothing behind
      reject(
        new Error(
          `The receiver did not drain within ${timeoutMs} ms: ` +
            `${queue.queued} alerts queued, ${queue.running} running.`,
        ),
      );
    }, timeoutMs);
    void idle.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
