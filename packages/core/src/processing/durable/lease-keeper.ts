import { warnAlways, type Logger } from '../../observability/logger.js';
import type { AlertRecord } from '../../queue-port/alert-queue.js';
import type { TryLease } from '../../queue-port/try-types.js';
import type { AlertLeaseStore } from './alert-store.js';

/** An alert this process took, with the token it holds it by. */
export interface Taken {
  readonly taken: Required<AlertRecord>;
  readonly token: string;
}

/** A random id for this process's leases (a lease token is `<instance>:<n>`). */
function instanceId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36)}`;
}

/**
 * The lease on one alert whose try runs in this process, as its handlers see it (`TryLease`):
 * `signal` aborts once the lease is lost. The `AbortController` is made only when a handler reads
 * `signal` (most never do). Each read compares this process's clock with the lease's end, so a
 * handler that reads it after a freeze sees it aborted even when its own timer runs before the
 * renewal timer that would have found the lease lost.
 */
export class HeldLease implements TryLease, Taken {
  readonly taken: Required<AlertRecord>;
  readonly token: string;
  readonly stalls: number;
  /** When the lease ends unless renewed (`Date.now()`: a process that was suspended sees it). */
  end: number;
  /** When the next renewal is due (`performance.now()`: a wall clock set back delays none). */
  renewAt: number;
  /** The alert a completion took next, if any. */
  next: Taken | undefined;
  /** The token the completion's take of the next alert was made with. */
  nextToken: string | undefined;
  readonly #logger: Logger;
  #controller: AbortController | undefined;
  #lost: Error | undefined;

  constructor(held: Taken, stalls: number, leaseMs: number, renewAt: number, logger: Logger) {
    this.taken = held.taken;
    this.token = held.token;
    this.stalls = stalls;
    this.end = Date.now() + leaseMs;
    this.renewAt = renewAt;
    this.#logger = logger;
  }

  get signal(): AbortSignal {
    if (this.#lost === undefined) {
      const now = Date.now();
      if (now >= this.end) this.lose(`it ended ${String(now - this.end)} ms ago`);
    }
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lost !== undefined) this.#controller.abort(this.#lost);
    }
    return this.#controller.signal;
  }

  /** The lease is lost (`why`): the signal aborts, and that is logged once. */
  lose(why: string): void {
    if (this.#lost !== undefined) return;
    const id = this.taken.entry.id;
    this.#lost = new Error(`The lease on alert ${id} was lost (${why}).`);
    this.#controller?.abort(this.#lost);
    warnAlways(
      this.#logger,
      { id },
      `churn-risk: the lease on alert ${id} was lost (${why}; another process may take it ` +
        'over); this try will not be stored. If this recurs, the process is frozen or starved ' +
        'longer than leaseMs: raise leaseMs, or keep handlers from blocking the event loop',
    );
  }
}

/**
 * The leases of the alerts whose tries run in this process, kept by one timer: each lease is
 * renewed every half of it (`store.extend`), from its take until its verdict is stored. A lease
 * is lost when a renewal is refused, or when its renewal comes after its end (this process was
 * frozen or starved past it, and another may have taken the alert over).
 *
 * One timer for all: it is set for the earliest renewal due, and cleared when no lease is held.
 */
export class LeaseKeeper {
  readonly #store: AlertLeaseStore;
  readonly #leaseMs: number;
  /** How often a held lease is renewed: every half of it. */
  readonly #renewEveryMs: number;
  readonly #instance = instanceId();
  #tokens = 0;
  readonly #held = new Set<HeldLease>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (`performance.now()`). */
  #timerAt = 0;

  constructor(store: AlertLeaseStore, leaseMs: number) {
    this.#store = store;
    this.#leaseMs = leaseMs;
    this.#renewEveryMs = Math.max(1, Math.floor(leaseMs / 2));
  }

  /** A fresh lease token of this process. */
  token(): string {
    return `${this.#instance}:${String(++this.#tokens)}`;
  }

  /** Starts keeping the lease of an alert just taken, until `release`. */
  hold(held: Taken, stalls: number, logger: Logger): HeldLease {
    const tick = performance.now();
    const lease = new HeldLease(held, stalls, this.#leaseMs, tick + this.#renewEveryMs, logger);
    this.#held.add(lease);
    if (this.#timer === undefined || this.#timerAt > lease.renewAt) {
      this.#wakeAt(lease.renewAt, tick);
    }
    return lease;
  }

  /** Stops renewing `lease` (its verdict is stored, or it is left to be taken over). */
  release(lease: HeldLease): void {
    this.#held.delete(lease);
    if (this.#held.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #wakeAt(at: number, tick: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(this.#renewDue, Math.max(1, at - tick));
  }

  /** The timer: renews every lease that is due, then waits for the next one. */
  readonly #renewDue = (): void => {
    this.#timer = undefined;
    // Its time has come, whatever the clock says (a test's fake timers may not fake this clock).
    const tick = Math.max(performance.now(), this.#timerAt);
    let soonest = Infinity;
    for (const lease of this.#held) {
      if (lease.renewAt <= tick) this.#renew(lease, tick);
      if (this.#held.has(lease)) soonest = Math.min(soonest, lease.renewAt);
    }
    if (soonest !== Infinity) this.#wakeAt(soonest, tick);
  };

  #renew(lease: HeldLease, tick: number): void {
    const now = Date.now();
    if (now >= lease.end) {
      this.#held.delete(lease); // nothing left to renew
      lease.lose(`its renewal came ${String(now - lease.end)} ms after its end`);
      return;
    }
    lease.renewAt = tick + this.#renewEveryMs;
    this.#store.extend(lease.taken.id, lease.token, this.#leaseMs).then(
      (kept) => {
        if (kept) {
          lease.end = now + this.#leaseMs;
        } else {
          this.#held.delete(lease);
          lease.lose('a renewal was refused');
        }
      },
      () => undefined, // the store is down: the verdict's write says so
    );
  }
}
