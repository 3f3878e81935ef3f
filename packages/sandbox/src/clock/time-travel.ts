import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxClock } from './clock.js';
import type { ManualClock } from './manual-clock.js';

/** Whether a clock can be moved by hand (`createManualClock()` or anything shaped like it). */
export function isManualClock(clock: SandboxClock): clock is ManualClock {
  const candidate = clock as Partial<ManualClock>;
  return typeof candidate.advanceTo === 'function' && typeof candidate.nextTimerAt === 'function';
}

/** What time travel acts on. */
export interface TimeTravelOptions {
  clock: ManualClock;
  /** Resolves when no delivery try is in flight. */
  idle: () => Promise<void>;
  /** Runs once the clock has arrived (the sandbox rescores every user). */
  afterArrival: () => void;
  /** Real milliseconds to wait for tries in flight after each step before moving on. Default 2000. */
  settleMs?: number;
}

/**
 * Returns `advance(ms)`: moves the manual clock forward one due timer at a time, waiting after each
 * step for the delivery tries it started (up to `settleMs` real time: a receiver that hangs then
 * times out on the sandbox clock at a later step), so a retry scheduled by one step falls due in a
 * later one and 72 hours play out in full. Calls run one after another, never interleaved.
 */
export function createTimeTravel(options: TimeTravelOptions): (ms: number) => Promise<number> {
  const { clock } = options;
  const settleMs = options.settleMs ?? 2000;
  const settle = async (): Promise<void> => {
    const timeout = new AbortController();
    await Promise.race([
      options.idle(),
      delay(settleMs, undefined, { signal: timeout.signal }).catch(() => undefined),
    ]);
    timeout.abort();
  };
  const travel = async (ms: number): Promise<number> => {
    const target = clock.now() + ms;
    await settle();
    for (let next = clock.nextTimerAt(); next !== undefined && next <= target;) {
      clock.advanceTo(next);
      await settle();
      next = clock.nextTimerAt();
    }
    clock.advanceTo(target);
    options.afterArrival();
    await settle();
    return clock.now();
  };
  let queue: Promise<unknown> = Promise.resolve();
  return (ms) => {
    const result = queue.then(() => travel(ms));
    queue = result.catch(() => undefined);
    return result;
  };
}
