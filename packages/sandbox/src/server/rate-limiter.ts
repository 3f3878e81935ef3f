import type { SandboxClock } from '../clock/clock.js';

/** A per-API-key limit: at most `max` requests per `windowMs` (fixed windows). */
export interface RateLimitOptions {
  max: number;
  /** Default 60,000 (one minute). */
  windowMs?: number;
}

/** Counts a request for `key`; returns the seconds to wait when over the limit, else `undefined`. */
export type RateLimiter = (key: string) => number | undefined;

/** Creates a fixed-window limiter on the injected clock. */
export function createRateLimiter(options: RateLimitOptions, clock: SandboxClock): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const windows = new Map<string, { start: number; count: number }>();
  return (key) => {
    const now = clock.now();
    let window = windows.get(key);
    if (!window || now - window.start >= windowMs) {
      window = { start: now, count: 0 };
      windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= options.max) return undefined;
    return Math.max(1, Math.ceil((window.start + windowMs - now) / 1000));
  };
}
