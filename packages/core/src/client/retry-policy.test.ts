import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  isRetryableCode,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
  RETRY_POLICY,
} from './retry-policy.js';

describe('retry policy', () => {
  it('retries 408, 429 and 5xx except 501; nothing else', () => {
    const retried = [408, 429, 500, 502, 503, 504, 599];
    const notRetried = [200, 204, 400, 401, 403, 404, 409, 413, 422, 501];
    for (const status of retried) expect(isRetryableStatus(status)).toBe(true);
    for (const status of notRetried) expect(isRetryableStatus(status)).toBe(false);
  });

  it('retries NETWORK_ERROR and TIMEOUT, never ABORTED or VALIDATION_ERROR', () => {
    expect(isRetryableCode('NETWORK_ERROR')).toBe(true);
    expect(isRetryableCode('TIMEOUT')).toBe(true);
    expect(isRetryableCode('ABORTED')).toBe(false);
    expect(isRetryableCode('VALIDATION_ERROR')).toBe(false);
  });

  it('backs off min(8000, 500 * 2^retry) times a factor in [0.75, 1]', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((retry) => backoffDelay(retry, () => 0.999_999_9))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffDelay(retry, () => 0))).toEqual([
      375, 750, 1500, 3000, 6000, 6000,
    ]);
    expect(backoffDelay(2, () => 0.5)).toBe(1750);
    expect(RETRY_POLICY.defaultMaxRetries).toBe(3);
  });

  it('reads Retry-After in seconds and as an HTTP date', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 7 ', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('uses Retry-After up to 60 s, the backoff beyond', () => {
    const now = 1_000_000;
    const random = (): number => 0;
    expect(retryDelay({ retry: 0, retryAfter: '60', now, random })).toBe(60_000);
    expect(retryDelay({ retry: 0, retryAfter: '61', now, random })).toBe(375);
    expect(retryDelay({ retry: 1, retryAfter: 'garbage', now, random })).toBe(750);
    expect(retryDelay({ retry: 2, retryAfter: null, now, random })).toBe(1500);
  });
});
