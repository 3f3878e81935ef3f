import { isServiceError, ServiceError } from '../client/service-error.js';
import type { BulkEventItem } from '../client/types.js';
import { parseInput } from '../client/validate-input.js';
import { bulkEventItemSchema } from '../wire/schemas.js';
import { resolveBatcherOptions, type BatcherOptions } from './batcher-options.js';

/** Queues events and sends them in bulk, in order, one request at a time. */
export interface EventBatcher {
  /** Validates `item` at once (throws `VALIDATION_ERROR`) and queues it; throws after `destroy()`. */
  push(item: BulkEventItem): void;
  /**
   * Sends everything queued, in order, in requests of at most `maxSize`; resolves with the number
   * of events sent. A failure that keeps its batch (network, time-out, 401, 403, 408, 429, 5xx, or
   * any error that is not a service's 4xx, e.g. from an `onRequest` hook) stops the flush and
   * rejects with that error; the batch stays at the head. A batch rejected as invalid (any other
   * 4xx) is dropped and the flush goes on; at the end it rejects with a `ServiceError` whose
   * `dropped` counts the events dropped (several dropped batches are summed into one error). If
   * both happen, it rejects with the failure and the drops go to `onError`.
   */
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

/**
 * 4xx statuses after which the batch is kept (as with 5xx, network errors and time-outs): 408 and
 * 429, after which resending may succeed, and 401 and 403, a wrong or revoked key: a configuration
 * error, not bad data, so the events wait at the head for the key to be fixed.
 */
const KEPT_4XX: ReadonlySet<number> = new Set([401, 403, 408, 429]);

/**
 * True when the service refused the batch itself: any 4xx other than 401, 403,
 * 408 and 429 (resending the same events cannot help; the drop is reported at once).
 */
function isRejectedAsInvalid(error: unknown): error is ServiceError {
  const status = isServiceError(error) ? error.status : undefined;
  return status !== undefined && status >= 400 && status <= 499 && !KEPT_4XX.has(status);
}

/** `error` as a `ServiceError` for `onError`: itself, or wrapped (code `FLUSH_FAILED`, `cause`). */
function asServiceError(error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new ServiceError({
    code: 'FLUSH_FAILED',
    message: `A batcher flush failed; the batch stays at the head of the queue: ${reason}`,
    cause: error,
  });
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

/** The report of a batch the service rejected as invalid: its error, with `dropped` set. */
function dropError(error: ServiceError, count: number): ServiceError {
  return new ServiceError({
    code: error.code,
    status: error.status,
    requestId: error.requestId,
    details: error.details,
    message: `The service rejected a batch of ${count} event(s), which were dropped: ${error.message}`,
    dropped: count,
    cause: error,
  });
}

/** One report for the batches dropped during one explicit flush: the only one, or a summary. */
function combineDrops(drops: readonly [ServiceError, ...ServiceError[]]): ServiceError {
  const [first] = drops;
  if (drops.length === 1) return first;
  const total = drops.reduce((sum, drop) => sum + (drop.dropped ?? 0), 0);
  return new ServiceError({
    code: first.code,
    status: first.status,
    requestId: first.requestId,
    details: first.details,
    message: `The service rejected ${drops.length} batches (${total} events in all), which were dropped; the first: ${first.message}`,
    dropped: total,
    cause: first,
  });
}

/**
 * Creates an event batcher over `send`. One request is in flight at a time and events keep their
 * order: a batch that failed stays at the head of the queue and is resent first, as the same events
 * with the same idempotency key, and the flush stops there. A batch rejected as invalid is dropped
 * and reported, and the flush goes on with the next batch. After a failed flush, reaching `maxSize`
 * starts no flush until a timed or explicit flush succeeds: the interval is the backoff.
 */
export function createEventBatcher(send: SendBatch, options: BatcherOptions = {}): EventBatcher {
  const { flushInterval, maxSize, maxQueueSize, onFlush, onError } = resolveBatcherOptions(options);
  const queue: BulkEventItem[] = [];
  let failedHead: { size: number; key: string } | undefined;
  let run: FlushRun | undefined;
  let destroying: Promise<void> | undefined;
  /** True from a failed flush to the next successful one: size-triggered flushes wait meanwhile. */
  let backingOff = false;

  const dropOverflow = (): void => {
    const over = queue.length - maxQueueSize;
    if (over <= 0) return;
    queue.splice(0, over);
    failedHead = undefined;
    const message = `The batcher queue is full (maxQueueSize ${maxQueueSize}): dropped the ${over} oldest event(s)`;
    guarded(onError, new ServiceError({ code: 'QUEUE_OVERFLOW', message, dropped: over }));
  };

  /**
   * Sends the queue batch by batch. A dropped batch goes to `onError` at once when no explicit
   * caller waits, else it is held: the flush rejects with it at the end. A failure that keeps its
   * batch stops the flush; it goes to `onError` (as a `ServiceError`) unless a caller waits.
   */
  const drain = async (current: FlushRun): Promise<number> => {
    let sent = 0;
    const held: ServiceError[] = [];
    const heldReport = (): ServiceError | undefined => {
      const [first, ...rest] = held;
      return first === undefined ? undefined : combineDrops([first, ...rest]);
    };
    try {
      while (queue.length > 0) {
        const size = failedHead?.size ?? Math.min(maxSize, queue.length);
        const key = failedHead?.key ?? crypto.randomUUID();
        failedHead = undefined;
        const batch = queue.splice(0, size);
        try {
          await send(batch, key);
        } catch (error) {
          if (!isRejectedAsInvalid(error)) {
            queue.unshift(...batch);
            failedHead = { size: batch.length, key };
            dropOverflow();
            throw error;
          }
          const dropped = dropError(error, batch.length);
          if (current.explicit) held.push(dropped);
          else guarded(onError, dropped);
          continue;
        }
        sent += batch.length;
        guarded(onFlush, batch.length);
      }
    } catch (error) {
      backingOff = true;
      const drops = heldReport();
      if (drops !== undefined) guarded(onError, drops);
      if (!current.explicit) guarded(onError, asServiceError(error));
      throw error;
    }
    backingOff = false;
    const drops = heldReport();
    if (drops !== undefined) throw drops;
    return sent;
  };

  const startFlush = (explicit: boolean): Promise<number> => {
    if (run !== undefined) {
      run.explicit ||= explicit;
      return run.promise;
    }
    const current: FlushRun = { explicit, promise: Promise.resolve(0) };
    current.promise = drain(current).finally(() => {
      if (run === current) run = undefined;
    });
    run = current;
    // Failures are reported by drain() (onError) or to the caller; never an unhandled rejection.
    current.promise.catch(() => undefined);
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
      if (queue.length >= maxSize && !backingOff) void startFlush(false).catch(() => undefined);
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
