import { defaultShouldRetry } from '../errors/non-retryable-error.js';
import { integerOption } from '../options/integer-option.js';
import type { RetryPolicy } from '../queue-port/try-types.js';
import type { RetryOptions } from '../receiver/types.js';

/** Default further tries of a failed handler. */
export const DEFAULT_HANDLER_RETRIES = 3;

/**
 * Default backoff: the delay after the failed try `attempt` (0 for the first try, as
 * `context.attempt`): 1 s after the first, then doubling (1 s, 2 s, 4 s).
 */
export function defaultBackoffMs(attempt: number): number {
  return 1000 * 2 ** attempt;
}

/** Reads the `retries` option: a count, or `{ retries, backoffMs, shouldRetry }`. */
export function resolveRetryPolicy(option: number | RetryOptions | undefined): RetryPolicy {
  const settings: RetryOptions = typeof option === 'number' ? { retries: option } : (option ?? {});
  const retries = integerOption('retries', settings.retries ?? DEFAULT_HANDLER_RETRIES, 0);
  const backoff = settings.backoffMs ?? defaultBackoffMs;
  if (typeof backoff !== 'function') throw new TypeError('retries.backoffMs must be a function.');
  const shouldRetry = settings.shouldRetry ?? defaultShouldRetry;
  if (typeof shouldRetry !== 'function') {
    throw new TypeError('retries.shouldRetry must be a function (error, attempt) => boolean.');
  }
  return {
    retries,
    delayMs(attempt) {
      const ms = backoff(attempt);
      return Number.isFinite(ms) && ms > 0 ? ms : 0;
    },
    shouldRetry,
  };
}
