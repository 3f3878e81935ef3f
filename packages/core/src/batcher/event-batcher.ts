import { ServiceError } from '../client/service-error.js';
import type { BulkEventItem } from '../client/types.js';
import { parseInput } from '../client/validate-input.js';
import { bulkEventItemSchema } from '../wire/schemas.js';
import { resolveBatcherOptions, type BatcherOptions } from './batcher-options.js';

/** Queues events and sends them in bulk, SPEC section 6. */
export interface EventBatcher {
  /** Validates `item` at once (throws `VALIDATION_ERROR`) and queues it; throws after `destroy()`. */
  push(item: BulkEventItem): void;
  /** Sends everything queued, in order; resolves with the number of events sent. */
  flush(): Promise<number>;
  /** Stops the timer, sends what is left; rejects if that final flush fails. */
  destroy(): Promise<void>;
  /** Events waiting to be sent (not counting a request in flight). */
  readonly size: number;
}

/** Sends one batch (at most `maxSize` events) with its idempotency key; resolves when accepted. */
export type SendBatch = (
  events: readonly BulkEventItem[],
  idempotencyKey: string,
) => Promise<unknown>;

interface FlushRun {
  promise: Promise<number>;
  /** True once a `flush()` or `destroy()` caller waits on it: failures go to them, not `onError`. */
  explicit: boolean;
}

/** 4xx answers that say nothing about the events themselves: the batch is kept and resent. */
const KEEP_ON_STATUS: ReadonlySet<number> = new Set([401, 403, 408, 429]);

/**
 * True when the service refused the batch itself (4xx other than 408 and 429): resending cannot
 * help. 401 and 403 are kept too: a wrong or revoked key is fixed by the operator, and the events
 * must not be lost meanwhile.
 */
function isRejectedAsInvalid(error: unknown): error is ServiceError {
  const status = error instanceof ServiceError ? error.status : undefined;
  return status !== undefined && status >= 400 && status <= 499 && !KEEP_ON_STATUS.has(status);
}

function guarded<A extends unknown[]>(
  listener: ((...args: A) => unknown) | undefined,
  ...args: A
): void {
  try {
    const result = listener?.(...args);
    if (result instanceof Promise) result.catch(() => undefined);
  } catch {
    // A failing listener must not break the batcher or crash the process.
  }
}

/**
 * Creates an event batcher over `send`. One request is in flight at a time and events keep their
 * order: a batch that failed stays at the head of the queue and is resent first, as the same events
 * with the same idempotency key. A batch rejected as invalid is dropped and reported.
 */
export function createEventBatcher(send: SendBatch, options: BatcherOptions = {}): EventBatcher {
  const { flushInterval, maxSize, maxQueueSize, onFlush, onError } = resolveBatcherOptions(options);
  const queue: BulkEventItem[] = [];
  let failedHead: { size: number; key: string } | undefined;
  let run: FlushRun | undefined;
  let destroying: Promise<void> | undefined;

  const dropOverflow = (): void => {
    const over = queue.length - maxQueueSize;
    if (over <= 0) return;
    queue.splice(0, over);
    failedHead = undefined;
    const message = `The batcher queue is full (maxQueueSize ${maxQueueSize}): dropped the ${over} oldest event(s)`;
    guarded(onError, new ServiceError({ code: 'QUEUE_OVERFLOW', message, dropped: over }));
  };

  const drain = async (): Promise<number> => {
    let sent = 0;
    while (queue.length > 0) {
      const size = failedHead?.size ?? Math.min(maxSize, queue.length);
      const key = failedHead?.key ?? crypto.randomUUID();
      failedHead = undefined;
      const batch = queue.splice(0, size);
      try {
        await send(batch, key);
      } catch (error) {
        if (isRejectedAsInvalid(error)) {
          const message = `The service rejected a batch of ${batch.length} event(s), which were dropped: ${error.message}`;
          throw new ServiceError({
            code: error.code,
            status: error.status,
            requestId: error.requestId,
            details: error.details,
            message,
            dropped: batch.length,
            cause: error,
          });
        }
        queue.unshift(...batch);
        failedHead = { size: batch.length, key };
        dropOverflow();
        throw error;
      }
      sent += batch.length;
      guarded(onFlush, batch.length);
    }
    return sent;
  };

  const startFlush = (explicit: boolean): Promise<number> => {
    if (run !== undefined) {
      run.explicit ||= explicit;
      return run.promise;
    }
    const current: FlushRun = {
      explicit,
      promise: drain().finally(() => {
        if (run === current) run = undefined;
      }),
    };
    run = current;
    current.promise.catch((error: unknown) => {
      if (!current.explicit && error instanceof ServiceError) guarded(onError, error);
    });
    return current.promise;
  };

  const timer = setInterval(() => {
    if (queue.length > 0) void startFlush(false).catch(() => undefined);
  }, flushInterval);
  (timer as { unref?: () => void }).unref?.();

  return {
    push(item) {
      if (destroying !== undefined) {
        throw new ServiceError({
          code: 'BATCHER_DESTROYED',
          message: 'push() after destroy(): the batcher is closed',
        });
      }
      queue.push(parseInput(bulkEventItemSchema, item, 'item'));
      dropOverflow();
      if (queue.length >= maxSize) void startFlush(false).catch(() => undefined);
    },
    flush() {
      if (queue.length === 0 && run === undefined) return Promise.resolve(0);
      return startFlush(true);
    },
    destroy() {
      destroying ??= (async () => {
        clearInterval(timer);
        if (run !== undefined) await run.promise.catch(() => undefined);
        if (queue.length > 0) await startFlush(true);
      })();
      return destroying;
    },
    get size() {
      return queue.length;
    },
  };
}
