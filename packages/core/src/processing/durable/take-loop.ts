import type { Logger } from '../../observability/logger.js';
import type { AlertProcessor, AlertRecord } from '../../queue-port/alert-queue.js';
import type { AlertStore } from './alert-store.js';

/** A take that answers "nothing due" faster than this did not wait: the loop naps. */
const INSTANT_MS = 5;
/** How long the loop waits after a take the store failed. */
const STORE_BACKOFF_MS = 500;

/** Waits `ms` milliseconds; `wake()` of the returned handle ends the wait early. */
export function nap(ms: number): { done: Promise<void>; wake: () => void } {
  let wake: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}

/** An alert this process took, with the token it holds it by. */
export interface Taken {
  readonly taken: AlertRecord<'taken'>;
  readonly token: string;
}

/** Where the take loop gets the lease token of each take (the queue's `LeaseKeeper`). */
export interface LeaseTokens {
  /** A fresh lease token of this process. */
  token(): string;
}

/** An error's message, for log lines and errors that name a cause. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether a durable queue's store answers, as its takes, reclaims and stall records found it: an
 * outage is logged once when it starts and once when it ends, never per failed call.
 */
export class StoreOutage {
  readonly #kind: string;
  #down = false;

  constructor(kind: string) {
    this.#kind = kind;
  }

  /** A call to the store failed. */
  failed(logger: Logger, error: unknown): void {
    if (this.#down) return;
    this.#down = true;
    logger.error(
      { queue: this.#kind, err: error },
      `churn-risk: the ${this.#kind} store does not answer (${describe(error)}); alerts are taken ` +
        'again once it does',
    );
  }

  /** A call to the store answered. */
  answered(logger: Logger): void {
    if (!this.#down) return;
    this.#down = false;
    logger.warn({ queue: this.#kind }, `churn-risk: the ${this.#kind} store answers again`);
  }
}

/** What the take loop of a consuming process works with. */
export interface TakeLoopParts {
  readonly store: AlertStore;
  readonly leases: LeaseTokens;
  readonly outage: StoreOutage;
  readonly processor: AlertProcessor;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly reclaimIntervalMs: number;
  /** Slots running alerts in this process. */
  running(): number;
  /** Runs a taken alert (and the ones its completions take) in a slot of its own. */
  run(taken: Taken): void;
}

/**
 * The consuming side of a durable queue in one process: takes alerts while it has free slots
 * (several takes at once while alerts are due, since a take is a round trip: their number doubles
 * with each take that found an alert, up to the free slots, and is one again after a take that
 * found nothing; that one take a store that can wait for work, like Redis, waits in, and another
 * store is asked again after `pollIntervalMs`, or when woken), and puts back the alerts whose
 * taker died every `reclaimIntervalMs`. So a backlog fills every slot within a few round trips,
 * and a wake-up per alert at a low rate costs a few takes, not one per free slot.
 */
export class TakeLoop {
  readonly #parts: TakeLoopParts;
  /** Takes in flight. */
  #taking = 0;
  /** Takes allowed in flight: doubled by a take that found an alert, 1 after one that did not. */
  #width: number;
  /** The takes in flight and their naps, for `stop`. */
  readonly #takes = new Set<Promise<void>>();
  /** Naps after a take that found nothing, ended early by `poke`. */
  readonly #naps = new Set<() => void>();
  #reclaimTimer: ReturnType<typeof setInterval> | undefined;
  #reclaiming = false;
  #stopping = false;

  constructor(parts: TakeLoopParts) {
    this.#parts = parts;
    this.#width = parts.processor.concurrency; // at start, as if alerts were due
  }

  /** Starts taking, and reclaiming where the store leaves that to core. */
  start(): void {
    this.fill();
    if (this.#parts.store.reclaimExpired === undefined) return; // the engine reclaims on its own
    void this.#reclaim();
    this.#reclaimTimer = setInterval(() => void this.#reclaim(), this.#parts.reclaimIntervalMs);
  }

  /** An alert may be due: naps end, and takes start where there is room. */
  poke(): void {
    for (const wake of this.#naps) wake();
    this.#naps.clear();
    this.fill();
  }

  /** A completion took the next alert: more may be due. */
  found(): void {
    this.#widen();
  }

  #widen(): void {
    this.#width = Math.min(this.#width * 2, this.#parts.processor.concurrency);
  }

  /** Starts takes while this process has free slots (see the class). */
  fill(): void {
    const { concurrency } = this.#parts.processor;
    while (
      !this.#stopping &&
      this.#parts.running() + this.#taking < concurrency &&
      this.#taking < this.#width
    ) {
      this.#taking++;
      const take = this.#takeOne().finally(() => {
        this.#takes.delete(take);
      });
      this.#takes.add(take);
    }
  }

  /**
   * Takes nothing more and reclaims nothing more; resolves once the takes in flight ended (a store
   * whose take waits for work ends the wait). What they took still runs.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#reclaimTimer);
    this.poke();
    await this.#parts.store.stopTaking?.();
    while (this.#takes.size > 0) await Promise.all(this.#takes);
  }

  /** Ends after `ms`, or at the next `poke`. */
  async #nap(ms: number): Promise<void> {
    const { done, wake } = nap(ms);
    this.#naps.add(wake);
    await done;
    this.#naps.delete(wake);
  }

  /** One take; its alert runs on its own, and the next takes start. */
  async #takeOne(): Promise<void> {
    const { store, leases, outage, processor } = this.#parts;
    const token = leases.token();
    const started = Date.now();
    let taken;
    try {
      const { leaseMs } = this.#parts;
      taken = await store.take(
        processor.order === 'per-user' ? { token, leaseMs, perUser: true } : { token, leaseMs },
      );
      outage.answered(processor.logger);
    } catch (error) {
      this.#taking--;
      if (this.#stopping) return;
      outage.failed(processor.logger, error);
      this.#width = 1;
      await this.#nap(STORE_BACKOFF_MS);
      this.fill();
      return;
    }
    this.#taking--;
    // Taken while stopping: it runs all the same (close waits for it), cheaper than a stall.
    if (taken !== undefined) {
      this.#widen();
      this.#parts.run({ taken, token });
    } else {
      this.#width = 1;
      const instant = Date.now() - started < INSTANT_MS;
      if (!this.#stopping && instant && this.#parts.pollIntervalMs > 0) {
        await this.#nap(this.#parts.pollIntervalMs);
      }
    }
    this.fill();
  }

  /** Puts back the alerts whose taker died. */
  async #reclaim(): Promise<void> {
    if (this.#reclaiming || this.#stopping) return;
    const { store, outage, processor } = this.#parts;
    this.#reclaiming = true;
    try {
      const reclaimed = (await store.reclaimExpired?.()) ?? 0;
      outage.answered(processor.logger);
      if (reclaimed > 0) this.poke();
    } catch (error) {
      // `stop()` may have been called during the await (the narrowing above does not see it).
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (!this.#stopping) outage.failed(processor.logger, error);
    } finally {
      this.#reclaiming = false;
    }
  }
}
