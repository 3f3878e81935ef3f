import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits `ms` real milliseconds (chaos delays are network time, not sandbox time, so they pass on a
 * manual clock too); rejects at once when `signal` aborts. Resolves immediately for 0.
 */
export async function waitRealTime(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms > 0) await delay(ms, undefined, { signal });
}
