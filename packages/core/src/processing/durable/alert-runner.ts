import { warnAlways, type Logger } from '../../observability/logger.js';
import type { AlertProcessor, AlertRecord } from '../../queue-port/alert-queue.js';
import { runStoredTry } from '../try-protocol.js';
import type { StoredTry, TryLease, TryVerdict } from '../../queue-port/try-types.js';
import {
  supersededBy,
  type AlertLeaseStore,
  type AlertStore,
  type TakeOptions,
} from './alert-store.js';
import { describe, nap, type StoreOutage, type Taken } from './take-loop.js';

/** What `completeAndTake` resolves with: whether the completion went through, the next alert. */
type Completion = Awaited<ReturnType<AlertStore['completeAndTake']>>;

/** How a slot runs the alerts it takes: whether a completion takes the next, and the tally. */
export interface RunMode {
  /** Whether a completion also takes the next alert. */
  chains(): boolean;
  /** A completion took the next alert. */
  tookNext?(): void;
  /** A verdict that was stored. */
  stored?(outcome: TryVerdict['outcome']): void;
}

/**
 * Runs the alerts a durable queue took, each under its lease until its verdict is stored (the
 * `HeldLease` its handlers see, renewed by the `LeaseKeeper` below): one try through core's try
 * protocol, the verdict core computed written by the store, and, while the slot's `RunMode`
 * chains, the next alert taken by the same write.
 */
export class AlertRunner {
  readonly #store: AlertStore;
  readonly #leases: LeaseKeeper;
  readonly #outage: StoreOutage;
  readonly #leaseMs: number;
  readonly #maxStalls: number;

  constructor(
    store: AlertStore,
    leases: LeaseKeeper,
    outage: StoreOutage,
    limits: { leaseMs: number; maxStalls: number },
  ) {
    this.#store = store;
    this.#leases = leases;
    this.#outage = outage;
    this.#leaseMs = limits.leaseMs;
    this.#maxStalls = limits.maxStalls;
  }

  /**
   * Runs a taken alert's try, then the alerts its completions took next (`completeAndTake`: one
   * round trip per alert), one after the other. Each try holds its alert's lease until its
   * verdict is stored. Core computes the stall count of a takeover here and writes it before the
   * try (a poison alert that kills every taker is counted all the same). One loop, no async layer
   * per alert of its own (the durable queues' hot path, `pnpm bench drain`).
   */
  async run(processor: AlertProcessor, first: Taken, mode: RunMode): Promise<void> {
    let held: Taken | undefined = first;
    while (held !== undefined) {
      const { taken } = held;
      const stalls = taken.lapsed ? taken.stalls + 1 : taken.stalls;
      const lease = this.#leases.hold(held, stalls, processor.logger);
      if (processor.order === 'per-user') {
        lease.perUser = true;
        lease.supersededBy = supersededBy(taken.alert, taken.newest);
      }
      try {
        if (taken.lapsed && !(await this.#recordStall(processor, lease))) return;
        const stored: StoredTry = taken.lapsed
          ? { tries: taken.tries, succeeded: taken.succeeded, stalls }
          : taken;
        await runStoredTry(
          processor.input(taken),
          stored,
          this.#maxStalls,
          (verdict) => this.#storeVerdict(processor, lease, verdict, mode),
          lease,
        );
      } catch (error) {
        processor.logger.error(
          { id: taken.id, err: error },
          `churn-risk: the try of alert ${taken.id} failed unexpectedly`,
        );
      } finally {
        this.#leases.release(lease);
      }
      held = lease.next;
      if (held !== undefined) mode.tookNext?.();
    }
  }

  /** Writes the stall count of a takeover; false when the lease is already gone (or the store). */
  async #recordStall(processor: AlertProcessor, lease: HeldLease): Promise<boolean> {
    const { taken } = lease;
    try {
      if (await this.#store.extend(taken.jobId, lease.token, this.#leaseMs, lease.stalls)) {
        const id = taken.id;
        if (lease.stalls <= this.#maxStalls) {
          warnAlways(
            processor.logger,
            { id, stalls: lease.stalls, maxStalls: this.#maxStalls },
            `churn-risk: alert ${id} is taken over: its previous run stopped before its outcome ` +
              `was stored (stall ${String(lease.stalls)} of at most ${String(this.#maxStalls)}); ` +
              'its handlers that had not succeeded run again (context.stalls > 0)',
          );
        }
        return true;
      }
      processor.logger.warn(
        { id: taken.id },
        `churn-risk: the lease on alert ${taken.id} was lost before its try started`,
      );
    } catch (error) {
      // Not run: the alert stays leased until its lease ends, then it is taken over again.
      this.#outage.failed(processor.logger, error);
    }
    return false;
  }

  /**
   * Stores a try's verdict, with the tries core counted; true when it went through. A store error
   * is retried (the lease is still renewed meanwhile) until the lease would have run out: then
   * the alert is left to be taken over, and nothing is reported for it here. The first write has
   * no async layer of its own (the durable queues' hot path, `pnpm bench drain`).
   */
  #storeVerdict(
    processor: AlertProcessor,
    lease: HeldLease,
    verdict: TryVerdict,
    mode: RunMode,
  ): Promise<boolean> {
    const deadline = Date.now() + this.#leaseMs;
    let write: Promise<boolean | Completion>;
    try {
      write = this.#write(lease, verdict, mode);
    } catch (error) {
      return this.#storeAgain(processor, lease, verdict, mode, error, deadline);
    }
    return write.then(
      (result) => this.#stored(processor, lease, verdict, mode, this.#took(lease, result)),
      (error: unknown) => this.#storeAgain(processor, lease, verdict, mode, error, deadline),
    );
  }

  /** After a write that went through (`written`), or was refused: the lease was lost. */
  #stored(
    processor: AlertProcessor,
    lease: HeldLease,
    verdict: TryVerdict,
    mode: RunMode,
    written: boolean,
  ): boolean {
    if (written) {
      mode.stored?.(verdict.outcome);
      return true;
    }
    const id = lease.taken.id;
    processor.logger.warn(
      { id, outcome: verdict.outcome },
      `churn-risk: the outcome of alert ${id} was not stored: its lease was lost and ` +
        'another process takes it over',
    );
    return false;
  }

  /** The verdict's write failed with `error`: written again, backing off, until `deadline`. */
  async #storeAgain(
    processor: AlertProcessor,
    lease: HeldLease,
    verdict: TryVerdict,
    mode: RunMode,
    error: unknown,
    deadline: number,
  ): Promise<boolean> {
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      if (Date.now() + wait > deadline) {
        const id = lease.taken.id;
        processor.logger.error(
          { id, err: error },
          `churn-risk: the outcome of alert ${id} could not be stored (${describe(error)}); ` +
            'it will be taken over once its lease expires',
        );
        return false;
      }
      await nap(wait).done;
      try {
        const result = await this.#write(lease, verdict, mode);
        return this.#stored(processor, lease, verdict, mode, this.#took(lease, result));
      } catch (again) {
        error = again;
      }
    }
  }

  /**
   * One write of a verdict; a completion takes the next alert in the same round trip while the
   * slot chains (`completeAndTake` with `lease.nextToken`), answered by `#took`.
   */
  #write(lease: HeldLease, verdict: TryVerdict, mode: RunMode): Promise<boolean | Completion> {
    const { jobId: id, tries } = lease.taken;
    const { token } = lease;
    if (verdict.outcome === 'completed') {
      if (!mode.chains()) return this.#store.complete(id, token);
      const nextToken = this.#leases.token();
      lease.nextToken = nextToken;
      const next: TakeOptions = { token: nextToken, leaseMs: this.#leaseMs };
      if (lease.perUser) next.perUser = true;
      return this.#store.completeAndTake(id, token, next);
    }
    const { error, succeeded } = verdict;
    if (verdict.outcome === 'failed') {
      return this.#store.fail(id, token, { outcome: 'failed', tries: tries + 1, succeeded, error });
    }
    const { delayMs } = verdict;
    return this.#store.scheduleRetry(id, token, {
      outcome: 'retry',
      delayMs,
      tries: tries + 1,
      succeeded,
      error,
    });
  }

  /** Whether a write went through; the alert a completion took next goes into `lease.next`. */
  #took(lease: HeldLease, result: boolean | Completion): boolean {
    if (typeof result === 'boolean') return result;
    const { next } = result;
    lease.next = next === undefined ? undefined : { taken: next, token: lease.nextToken as string };
    return result.completed;
  }
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
  readonly taken: AlertRecord<'taken'>;
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
  /** In order per user: takes are in order, and the alert's superseded mark. */
  perUser = false;
  supersededBy: string | undefined;
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
    const id = this.taken.id;
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
    this.#store.extend(lease.taken.jobId, lease.token, this.#leaseMs).then(
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
