/**
 * The webhook delivery policy, as data: the first retry 1 minute after the first
 * try, each delay doubling, at most 6 hours between tries, no try later than 72 hours after the first.
 */
export const DELIVERY_POLICY = Object.freeze({
  firstDelayMs: 60_000,
  factor: 2,
  maxDelayMs: 6 * 3_600_000,
  windowMs: 72 * 3_600_000,
  timeoutMs: 10_000,
});

/** The delay before retry number `retry` (0 = the first retry): 1 min, 2 min, 4 min ... at most 6 h. */
export function retryDelayMs(retry: number): number {
  return Math.min(
    DELIVERY_POLICY.maxDelayMs,
    DELIVERY_POLICY.firstDelayMs * DELIVERY_POLICY.factor ** retry,
  );
}

/**
 * When the next try is due after `triesMade` failed tries, the last planned at `lastPlannedAt`;
 * `undefined` when it would fall later than 72 hours after the first try (`firstAt`).
 */
export function nextTryAt(
  firstAt: number,
  lastPlannedAt: number,
  triesMade: number,
): number | undefined {
  const next = lastPlannedAt + retryDelayMs(triesMade - 1);
  return next - firstAt <= DELIVERY_POLICY.windowMs ? next : undefined;
}
