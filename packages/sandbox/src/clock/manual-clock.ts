import type { SandboxClock, TimerHandle } from './clock.js';

/** A clock that moves only when told to: for tests. */
export interface ManualClock extends SandboxClock {
  /** Moves time forward by `ms`, running every timer that falls due, in order of due time. */
  advance(ms: number): void;
  /** Moves time to `time` (never backwards), running every timer that falls due on the way. */
  advanceTo(time: number): void;
  /** When the earliest pending timer falls due, or `undefined` when none is pending. */
  nextTimerAt(): number | undefined;
  /** How many timers are pending. */
  pendingTimers(): number;
}

interface Timer {
  id: number;
  due: number;
  fn: () => void;
}

/** The default start of a manual clock: 2025-01-01T00:00:00.000Z. */
export const MANUAL_CLOCK_START = Date.UTC(2025, 0, 1);

/**
 * Creates a manual clock starting at `start` (ms since the epoch). Timers due at the same time run
 * in the order they were set. A timer set while others run is due no earlier than the current time.
 *
 * @example
 * const clock = createManualClock();
 * const sandbox = await createSandbox({ clock });
 * clock.advance(60_000); // the first delivery retry falls due
 */
export function createManualClock(start: number = MANUAL_CLOCK_START): ManualClock {
  let current = start;
  let nextId = 1;
  const timers = new Map<number, Timer>();

  const earliest = (): Timer | undefined => {
    let found: Timer | undefined;
    for (const timer of timers.values()) {
      if (
        found === undefined ||
        timer.due < found.due ||
        (timer.due === found.due && timer.id < found.id)
      ) {
        found = timer;
      }
    }
    return found;
  };

  const advanceTo = (time: number): void => {
    for (let timer = earliest(); timer !== undefined && timer.due <= time; timer = earliest()) {
      timers.delete(timer.id);
      current = Math.max(current, timer.due);
      timer.fn();
    }
    current = Math.max(current, time);
  };

  return {
    now: () => current,
    setTimeout: (fn: () => void, ms: number): TimerHandle => {
      const id = nextId++;
      timers.set(id, { id, due: current + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout: (handle: TimerHandle): void => {
      if (typeof handle === 'number') timers.delete(handle);
    },
    advance: (ms) => {
      advanceTo(current + ms);
    },
    advanceTo,
    nextTimerAt: () => earliest()?.due,
    pendingTimers: () => timers.size,
  };
}
