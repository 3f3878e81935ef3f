import type { AlertQueue } from '../queue-port/alert-queue.js';

/**
 * Runs `wait` (the queue's `idle` or `close`). With `timeoutMs`, rejects with an `Error` that says
 * how much work is still in flight once that time has passed (the work itself goes on, and the
 * aborted wait keeps nothing behind).
 */
export function waitForQueue(
  queue: Pick<AlertQueue, 'queued' | 'running'>,
  wait: (signal?: AbortSignal) => Promise<void>,
  timeoutMs: number | undefined,
): Promise<void> {
  if (timeoutMs === undefined) return wait();
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    return Promise.reject(new TypeError('timeoutMs must be a non-negative number.'));
  }
  const stop = new AbortController();
  const done = wait(stop.signal);
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
    done.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
