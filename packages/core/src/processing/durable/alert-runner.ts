import { warnAlways } from '../../observability/logger.js';
import type { AlertProcessor, AlertRecord } from '../../queue-port/alert-queue.js';
import { runStoredTry } from '../try-protocol.js';
import type { StoredTry, TryVerdict } from '../../queue-port/try-types.js';
import type { AlertStore } from './alert-store.js';
import type { HeldLease, LeaseKeeper, Taken } from './lease-keeper.js';
import { describe, type StoreOutage } from './store-outage.js';
import { nap } from './timing.js';

/** What `completeAndTake` resolves with: whether the completion went through, the next alert. */
type Completion = { completed: boolean; next: Required<AlertRecord> | undefined };

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
 * Runs the alerts a durable queue took, each under its lease until its verdict is stored:
 * one try through core's try protocol, the verdict core computed written by the store,
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
      try {
        if (taken.lapsed && !(await this.#recordStall(processor, lease))) return;
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
      held = lease.next;
      if (held !== undefined) mode.tookNext?.();
    }
  }

  /** Writes the stall count of a takeover; false when the lease is already gone (or the store). */
  async #recordStall(processor: AlertProcessor, lease: HeldLease): Promise<boolean> {
    const { taken } = lease;
    try {
      if (await this.#store.extend(taken.id, lease.token, this.#leaseMs, lease.stalls)) {
        const id = taken.entry.id;
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
    const id = lease.taken.entry.id;
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
        const id = lease.taken.entry.id;
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
    const { id, tries } = lease.taken;
    const { token } = lease;
    if (verdict.outcome === 'completed') {
      if (!mode.chains()) return this.#store.complete(id, token);
      const nextToken = this.#leases.token();
      lease.nextToken = nextToken;
      return this.#store.completeAndTake(id, token, { token: nextToken, leaseMs: this.#leaseMs });
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
