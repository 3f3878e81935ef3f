/** A handle returned by `SandboxClock.setTimeout`, passed back to `clearTimeout`. */
export type TimerHandle = unknown;

/**
 * The time source and timers of the sandbox. Every time-dependent decision (scores, cooldowns,
 * delivery retries, rate-limit windows, idempotency expiry) goes through one of these, so tests can
 * replace it with `createManualClock()` and cover 72 hours in milliseconds.
 */
export interface SandboxClock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now` and Node's timers (unref'd, so they never keep a process alive). */
export const systemClock: SandboxClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};
