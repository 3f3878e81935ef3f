import type { RetryOptions } from './types.js';

/** Default further tries of a failed handler. */
export const DEFAULT_HANDLER_RETRIES = 3;

/** Default backoff: 1 s before the first retry, then doubling (1 s, 2 s, 4 s). */
export function defaultBackoffMs(retry: number): number {
  return 1000 * 2 ** (retry - 1);
}

/** A checked retry policy. */
export interface RetryPolicy {
  /** Further tries after the first failure. */
  retries: number;
  /** Delay before retry `retry` (1-based), in milliseconds; never negative or NaN. */
  delayMs: (retry: number) => number;
}

/** Reads the `retries` option: a count, or `{ retries, backoffMs }`. */
export function resolveRetryPolicy(option: number | RetryOptions | undefined): RetryPolicy {
  const settings: RetryOptions = typeof option === 'number' ? { retries: option } : (option ?? {});
  const retries = settings.retries ?? DEFAULT_HANDLER_RETRIES;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new TypeError('retries must be a whole number of at least 0.');
  }
  const backoff = settings.backoffMs ?? defaultBackoffMs;
  if (typeof backoff !== 'function') throw new TypeError('retries.backoffMs must be a function.');
  return {
    retries,
    delayMs(retry) {
      const ms = backoff(retry);
      return Number.isFinite(ms) && ms > 0 ? ms : 0;
    },
  };
}

/**
 * Waits `ms` milliseconds. The timer is deliberately not `unref`'d: a handler waiting for its retry
 * is work in flight, and keeps a Node process alive until it has run (use `close()` to finish).
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
