import type { WorkQueue } from './work-queue.js';

/**
 * Waits until the queue is idle. With `timeoutMs`, rejects with an `Error` that says how much work
 * is still in flight once that time has passed (the work itself goes on).
 */
export function drainQueue(queue: WorkQueue, timeoutMs: number | undefined): Promise<void> {
  const idle = queue.idle();
  if (timeoutMs === undefined) return idle;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    return Promise.reject(new TypeError('timeoutMs must be a non-negative number.'));
  }
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
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
