import { refuseUnknownOptions } from '../options/known-options.js';
import { z } from 'zod';
import type { ServiceError } from '../client/service-error.js';
import { parseInput } from '../client/validate-input.js';
import { MAX_BULK_EVENTS } from '../wire/schemas.js';

/** Options of `client.createBatcher(options)`. */
export interface BatcherOptions {
  /** Ms between timed flushes (when events are waiting); default 5000. */
  flushInterval?: number | undefined;
  /**
   * Events per request, 1 to 500; reaching it starts a flush (not after a failed flush, until a
   * timed or explicit flush succeeds). Default 100.
   */
  maxSize?: number | undefined;
  /** Most events waiting; beyond it the oldest are dropped (`QUEUE_OVERFLOW`). Default 10000. */
  maxQueueSize?: number | undefined;
  /** Called with the number of events after each request the service accepted. */
  onFlush?: ((count: number) => void) | undefined;
  /**
   * Called with a `ServiceError` when a timed or size-triggered flush fails (an error that is not
   * a `ServiceError` comes wrapped, code `FLUSH_FAILED`, the original in `cause`), when such a
   * flush drops a batch the service rejected as invalid (`dropped` set), for the drops of an
   * explicit flush that a retryable failure then stopped, and on `QUEUE_OVERFLOW`. An exception
   * thrown here is swallowed.
   */
  onError?: ((error: ServiceError) => void) | undefined;
}

/** Defaults of the batcher. */
export const BATCHER_DEFAULTS = Object.freeze({
  flushInterval: 5000,
  maxSize: 100,
  maxQueueSize: 10_000,
});

const callback = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', {
  error: 'must be a function',
});

const batcherOptionsSchema = z.object({
  flushInterval: z.number().positive('flushInterval must be a positive number of ms'),
  maxSize: z.number().int().min(1).max(MAX_BULK_EVENTS),
  maxQueueSize: z.number().int().min(1),
  onFlush: callback.optional(),
  onError: callback.optional(),
});

/** Batcher options after defaults and checks. */
export interface ResolvedBatcherOptions {
  flushInterval: number;
  maxSize: number;
  maxQueueSize: number;
  onFlush: ((count: number) => void) | undefined;
  onError: ((error: ServiceError) => void) | undefined;
}

/** Applies the defaults; throws a `VALIDATION_ERROR` for a bad option. */
export function resolveBatcherOptions(options: BatcherOptions): ResolvedBatcherOptions {
  refuseUnknownOptions('createEventBatcher', options, [
    'flushInterval',
    'maxSize',
    'maxQueueSize',
    'onFlush',
    'onError',
  ]);
  const resolved: ResolvedBatcherOptions = {
    flushInterval: options.flushInterval ?? BATCHER_DEFAULTS.flushInterval,
    maxSize: options.maxSize ?? BATCHER_DEFAULTS.maxSize,
    maxQueueSize: options.maxQueueSize ?? BATCHER_DEFAULTS.maxQueueSize,
    onFlush: options.onFlush,
    onError: options.onError,
  };
  parseInput(batcherOptionsSchema, resolved, 'options');
  return resolved;
}
