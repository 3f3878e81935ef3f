import type { AlertProcessor } from '../receiver/alert-queue.js';
import { runStoredTry } from '../receiver/try-protocol.js';
import type { StoredTry, TryVerdict } from '../receiver/try-types.js';
import type { AlertStore } from './alert-store.js';
import type { HeldLease, LeaseKeeper, Taken } from './lease-keeper.js';
import { describe, type StoreOutage } from './store-outage.js';
import { nap } from './timing.js';

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
 * Runs the alerts a durable queue took, each under its lease until its verdict is stored (SPEC 17
 * and 21): one try through core's try protocol, the verdict core computed written by the store,
 * and, while the slot's `RunMode` chains, the next alert taken by the same write.
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
   * round trip per alert), one after the other.
   */
  async run(processor: AlertProcessor, first: Taken, mode: RunMode): Promise<void> {
    let next: Taken | undefined = first;
    while (next !== undefined) {
      next = await this.#runOne(processor, next, mode);
      if (next !== undefined) mode.tookNext?.();
    }
  }

  /**
   * One try of a taken alert, its lease kept until its verdict is stored; resolves with the
   * alert its completion took next, if any. Core computes the stall count of a takeover here and
   * writes it before the try (a poison alert that kills every taker is counted all the same).
   */
  async #runOne(processor: AlertProcessor, held: Taken, mode: RunMode): Promise<Taken | undefined> {
    const { taken } = held;
    const stalls = taken.lapsed ? taken.stalls + 1 : taken.stalls;
    const lease = this.#leases.hold(held, stalls, processor.logger);
    try {
      if (taken.lapsed && !(await this.#recordStall(processor, lease))) return undefined;
      const stored: StoredTry = taken.lapsed
        ? { tries: taken.tries, succeeded: taken.succeeded, stalls }
        : taken;
      await runStoredTry(
        processor.input(taken.entry),
        stored,
        this.#maxStalls,
        (verdict) => this.#storeVerdict(processor, lease, verdict, mode),
        lease,
      );
    } catch (error) {
      processor.logger.error(
        { id: taken.entry.id, err: error },
        `churn-risk: the try of alert ${taken.entry.id} failed unexpectedly`,
      );
    } finally {
      this.#leases.release(lease);
    }
    return lease.next;
  }

  /** Writes the stall count of a takeover; false when the lease is already gone (or the store). */
  async #recordStall(processor: AlertProcessor, lease: HeldLease): Promise<boolean> {
    const { taken } = lease;
    try {
      if (await this.#store.extend(taken.id, lease.token, this.#leaseMs, lease.stalls)) return true;
      processor.logger.warn(
        { id: taken.entry.id },
        `churn-risk: the lease on alert ${taken.entry.id} was lost before its try started`,
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
   * the alert is left to be taken over, and nothing is reported for it here.
   */
  async #storeVerdict(
    processor: AlertProcessor,
    lease: HeldLease,
    verdict: TryVerdict,
    mode: RunMode,
  ): Promise<boolean> {
    const id = lease.taken.entry.id;
    const deadline = Date.now() + this.#leaseMs;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        const written = await this.#write(lease, verdict, mode);
        if (written) {
          mode.stored?.(verdict.outcome);
        } else {
          processor.logger.warn(
            { id, outcome: verdict.outcome },
            `churn-risk: the outcome of alert ${id} was not stored: its lease was lost and ` +
              'another process takes it over',
          );
        }
        return written;
      } catch (error) {
        if (Date.now() + wait > deadline) {
          processor.logger.error(
            { id, err: error },
            `churn-risk: the outcome of alert ${id} could not be stored (${describe(error)}); ` +
              'it will be taken over once its lease expires',
          );
          return false;
        }
        await nap(wait).done;
      }
    }
  }

  /**
   * One write of a verdict; a completion takes the next alert in the same round trip while the
   * slot chains (into `lease.next`).
   */
  #write(lease: HeldLease, verdict: TryVerdict, mode: RunMode): Promise<boolean> {
    const { id, tries } = lease.taken;
    const { token } = lease;
    if (verdict.outcome === 'completed') {
      if (!mode.chains()) return this.#store.complete(id, token);
      const next = { token: this.#leases.token(), leaseMs: this.#leaseMs };
      return this.#store.completeAndTake(id, token, next).then((done) => {
        lease.next = done.next === undefined ? undefined : { taken: done.next, token: next.token };
        return done.completed;
      });
    }
    const { error, succeeded } = verdict;
    if (verdict.outcome === 'failed') {
      return this.#store.fail(id, token, { error, succeeded, tries: tries + 1 });
    }
    const { delayMs } = verdict;
    return this.#store.scheduleRetry(id, token, { delayMs, tries: tries + 1, succeeded, error });
  }
}
