/** The API client's retry rules, as data. */
export const RETRY_POLICY = Object.freeze({
  /** Retries after the first attempt, unless `maxRetries` says otherwise. */
  defaultMaxRetries: 3,
  /** Statuses below 500 that are retried. */
  retryableStatuses: Object.freeze<number[]>([408, 429]),
  /** 5xx statuses that are not retried. */
  nonRetryableServerStatuses: Object.freeze<number[]>([501]),
  /** Codes without a response that are retried. */
  retryableCodes: Object.freeze<string[]>(['NETWORK_ERROR', 'TIMEOUT']),
  /** Backoff: `min(maxDelayMs, baseDelayMs * 2^retry)`, then times a factor in [jitterMin, 1]. */
  baseDelayMs: 500,
  maxDelayMs: 8000,
  jitterMin: 0.75,
  /** A `Retry-After` longer than this is ignored in favour of the backoff. */
  maxRetryAfterMs: 60_000,
});

/** True when a response with this status is retried. */
export function isRetryableStatus(status: number): boolean {
  if (RETRY_POLICY.retryableStatuses.includes(status)) return true;
  return (
    status >= 500 && status <= 599 && !RETRY_POLICY.nonRetryableServerStatuses.includes(status)
  );
}

/** True when a failure without a response (`NETWORK_ERROR`, `TIMEOUT`) is retried. */
export function isRetryableCode(code: string): boolean {
  return RETRY_POLICY.retryableCodes.includes(code);
}

/**
 * The backoff before retry number `retry` (0 before the first retry): `min(8000, 500 * 2^retry)`
 * ms times `0.75 + 0.25 * random()`, `random` returning a number in [0, 1) like `Math.random`.
 */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_POLICY.maxDelayMs, RETRY_POLICY.baseDelayMs * 2 ** retry);
  const factor = RETRY_POLICY.jitterMin + (1 - RETRY_POLICY.jitterMin) * random();
  return Math.round(base * factor);
}

/**
 * Milliseconds a `Retry-After` header asks to wait: whole seconds or an HTTP date (a date in the
 * past is 0). `undefined` when absent or unreadable.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Inputs of `retryDelay`. */
export interface RetryDelayInput {
  /** 0 before the first retry, 1 before the second, ... */
  retry: number;
  /** The `Retry-After` header of the failed response, if any. */
  retryAfter?: string | null | undefined;
  now: number;
  random: () => number;
}

/** The wait before a retry: `Retry-After` when present and at most 60 s, else the backoff. */
export function retryDelay(input: RetryDelayInput): number {
  const asked = parseRetryAfter(input.retryAfter, input.now);
  if (asked !== undefined && asked <= RETRY_POLICY.maxRetryAfterMs) return asked;
  return backoffDelay(input.retry, input.random);
}
