import type {
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertQueue,
  QueueHealth,
  QueuedAlert,
  SweepOptions,
  SweepResult,
} from '../receiver/alert-queue.js';
import { MIN_SWEEP_BUDGET_MS } from '../receiver/alert-queue.js';
import { integerOption } from '../receiver/integer-option.js';
import { refuseUnknownOptions } from '../options/known-options.js';
import { runStoredTry, type TryVerdict } from '../receiver/try-protocol.js';
import type {
  AlertStore,
  FailedAlert,
  FailedAlertStore,
  FailedListOptions,
  QueueCounts,
  StoredAlert,
} from './alert-store.js';
import { nap, pollUntil, withTimeout } from './timing.js';

/** Options of `createDurableQueue`. */
export interface DurableQueueOptions {
  /**
   * How long a taker holds an alert before another process may take it over, in ms. The lease is
   * renewed every half of it while the handlers run; a process that dies loses it after this
   * time, and its alert is taken over at the next reclaim: at most `leaseMs + reclaimIntervalMs`
   * after the death (60 s with the defaults). Default 30,000.
   */
  leaseMs?: number;
  /**
   * How often a consuming process puts back alerts whose taker died (`store.reclaimExpired()`), in
   * ms; every call does the whole job, so a dead taker's alert is taken over at most `leaseMs +
   * reclaimIntervalMs` after its last renewal. Default `min(leaseMs, 30000)`.
   */
  reclaimIntervalMs?: number;
  /**
   * An alert whose taker died mid-alert more than this many times (it crashes every process that
   * takes it) is failed at its next take, with an `AlertStalledError`, and `onError` is called
   * once. Default 3.
   */
  maxStalls?: number;
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
  /**
   * Longest wait for the store to record an alert; beyond it the answer is 503. It bounds the
   * accept and nothing else (`health()` and `depth()` have a bound of their own, 2 s). Default 2,000.
   */
  enqueueTimeoutMs?: number;
  /** How long a consuming process waits before asking again when nothing was due, in ms. Default 250. */
  pollIntervalMs?: number;
}

/**
 * The queue `createDurableQueue` returns: an `AlertQueue` plus the store's failed-set tools
 * (`failed`, `retry`, `retryAll`, `counts`, as `FailedAlertStore` describes them).
 */
export interface DurableQueue<S extends AlertStore = AlertStore>
  extends AlertQueue, FailedAlertStore {
  /** The store the queue runs. */
  readonly store: S;
  /** Alerts waiting in the store for any process (waiting and delayed): the queue-depth gauge. */
  depth(): Promise<number>;
  health(): Promise<QueueHealth>;
}

/** The defaults of `createDurableQueue` (SPEC 9, 15 and 17). */
export const DURABLE_QUEUE_DEFAULTS = Object.freeze({
  leaseMs: 30_000,
  maxStalls: 3,
  dedupeTtlMs: 72 * 3_600_000,
  enqueueTimeoutMs: 2_000,
  pollIntervalMs: 250,
});

/** The options `createDurableQueue` knows (anything else is a `TypeError`). */
const OPTION_KEYS = [
  'leaseMs',
  'reclaimIntervalMs',
  'maxStalls',
  'dedupeTtlMs',
  'enqueueTimeoutMs',
  'pollIntervalMs',
] as const;
/** Old and mistaken names, with the right one. */
const RENAMED = {
  lockDurationMs: 'the lease is called leaseMs',
  stalledIntervalMs: 'the reclaim interval is called reclaimIntervalMs',
} as const;
/** How long `health()` and `depth()` wait for the store. */
const STATUS_TIMEOUT_MS = 2_000;

const ACCEPTED: AcceptedAlert = Object.freeze({ done: Promise.resolve() });
/** A take that answers "nothing due" faster than this did not wait: the pump naps. */
const INSTANT_MS = 5;
const STORE_BACKOFF_MS = 500;

/** How a slot runs the alerts it takes: whether a completion takes the next, and the tally. */
interface RunMode {
  /** Whether a completion also takes the next alert. */
  chains(): boolean;
  /** A verdict that was stored. */
  stored?(outcome: TryVerdict['outcome']): void;
}

/** An alert this process took, with the token it holds it by. */
interface Taken {
  readonly taken: StoredAlert;
  readonly token: string;
}

/** A random id for this process's leases (a lease token is `<instance>:<n>`). */
function instanceId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36)}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class DurableAlertQueue<S extends AlertStore> implements DurableQueue<S> {
  readonly processesInline = false;
  readonly durable = true;
  readonly store: S;
  readonly #leaseMs: number;
  readonly #reclaimIntervalMs: number;
  readonly #maxStalls: number;
  readonly #dedupeTtlMs: number;
  readonly #enqueueTimeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #instance = instanceId();
  #tokens = 0;
  #processor: AlertProcessor | undefined;
  #running = 0;
  /** Whether `consume` started taking alerts. */
  #consuming = false;
  /** Takes in flight; several while alerts are due, one (which may wait for work) once drained. */
  #taking = 0;
  /** The last take found nothing due. */
  #drained = false;
  /** The takes in flight and their naps, for `close`. */
  readonly #takes = new Set<Promise<void>>();
  #reclaimTimer: ReturnType<typeof setInterval> | undefined;
  #reclaiming = false;
  #stopping = false;
  #closed: Promise<void> | undefined;
  /** Naps after a take that found nothing, ended early by `#poke`. */
  readonly #naps = new Set<() => void>();
  /** Whether the store failed at the last call of the pump or the reclaim (logged once). */
  #storeDown = false;

  constructor(store: S, options: DurableQueueOptions) {
    refuseUnknownOptions('createDurableQueue', options, OPTION_KEYS, RENAMED);
    this.store = store;
    this.#leaseMs = integerOption('leaseMs', options.leaseMs ?? DURABLE_QUEUE_DEFAULTS.leaseMs, 1);
    this.#reclaimIntervalMs = integerOption(
      'reclaimIntervalMs',
      options.reclaimIntervalMs ?? Math.min(this.#leaseMs, 30_000),
      1,
    );
    this.#maxStalls = integerOption(
      'maxStalls',
      options.maxStalls ?? DURABLE_QUEUE_DEFAULTS.maxStalls,
      0,
    );
    this.#dedupeTtlMs = integerOption(
      'dedupeTtlMs',
      options.dedupeTtlMs ?? DURABLE_QUEUE_DEFAULTS.dedupeTtlMs,
      1,
    );
    this.#enqueueTimeoutMs = integerOption(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? DURABLE_QUEUE_DEFAULTS.enqueueTimeoutMs,
      1,
    );
    this.#pollIntervalMs = integerOption(
      'pollIntervalMs',
      options.pollIntervalMs ?? DURABLE_QUEUE_DEFAULTS.pollIntervalMs,
      0,
    );
  }

  get kind(): string {
    return this.store.kind;
  }

  attach(processor: AlertProcessor): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
  }

  accept(entry: QueuedAlert): Promise<AcceptResult> {
    if (this.#closed !== undefined) return Promise.reject(new Error('The queue is closed.'));
    const stored = this.store.accept(entry, { dedupeTtlMs: this.#dedupeTtlMs });
    const message = `The ${this.kind} store did not record the alert`;
    return withTimeout(stored, this.#enqueueTimeoutMs, message).then((answer): AcceptResult => {
      if (answer === 'duplicate') return 'duplicate';
      this.#poke(); // a consuming process takes it at once
      return ACCEPTED;
    });
  }

  consume(): void {
    if (this.#processor === undefined || this.#consuming || this.#stopping) return;
    this.#consuming = true;
    this.#fill();
    if (this.store.reclaimExpired === undefined) return; // the engine reclaims on its own timer
    void this.#reclaim();
    this.#reclaimTimer = setInterval(() => void this.#reclaim(), this.#reclaimIntervalMs);
  }

  idle(signal?: AbortSignal): Promise<void> {
    // A consuming process drains the shared queue: nothing waiting, delayed or running anywhere;
    // a process that only accepts has nothing of its own to wait for.
    return pollUntil(async () => {
      if (this.#running > 0) return false;
      if (!this.#consuming) return true;
      const counts = await this.store.counts();
      return counts.waiting + counts.active + counts.delayed === 0;
    }, signal);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stopping = true;
      clearInterval(this.#reclaimTimer);
      this.#poke();
      // The pump ends after its current take (a store whose take waits for work ends the wait),
      // and every try it started has stored its verdict before the store is closed.
      await this.store.stopTaking?.();
      while (this.#takes.size > 0) await Promise.all(this.#takes);
      await pollUntil(() => this.#running === 0);
      await this.store.close();
    })();
    return this.#closed;
  }

  get queued(): number {
    return 0; // waiting alerts live in the store: see counts() and depth()
  }

  get running(): number {
    return this.#running;
  }

  depth(): Promise<number> {
    return withTimeout(
      this.store.depth(),
      STATUS_TIMEOUT_MS,
      `The ${this.kind} store did not answer`,
    );
  }

  async health(): Promise<QueueHealth> {
    try {
      const message = `The ${this.kind} store did not answer`;
      return await withTimeout(this.store.health(), STATUS_TIMEOUT_MS, message);
    } catch (error) {
      return { reachable: false, error: describe(error) };
    }
  }

  failed(options?: FailedListOptions): Promise<FailedAlert[]> {
    return this.store.failed(options);
  }

  retry(id: string): Promise<void> {
    return this.store.retry(id).then(() => {
      this.#poke();
    });
  }

  retryAll(): Promise<number> {
    return this.store.retryAll().then((count) => {
      this.#poke();
      return count;
    });
  }

  counts(): Promise<QueueCounts> {
    return this.store.counts();
  }

  /** An alert may be due, or a slot is free: naps end, and takes start where there is room. */
  #poke(): void {
    this.#drained = false;
    for (const wake of this.#naps) wake();
    this.#naps.clear();
    this.#fill();
  }

  /**
   * Starts takes while this process has free slots: several at once while alerts are due (a
   * take is a round trip to the store), one once the store had nothing (a store that can wait for
   * work, like Redis, waits in it; another is asked again after `pollIntervalMs`).
   */
  #fill(): void {
    const processor = this.#processor;
    if (processor === undefined || !this.#consuming) return;
    while (
      !this.#stopping &&
      this.#running + this.#taking < processor.concurrency &&
      (this.#taking === 0 || !this.#drained)
    ) {
      this.#taking++;
      const take = this.#takeOne(processor).finally(() => {
        this.#takes.delete(take);
      });
      this.#takes.add(take);
    }
  }

  /** Ends after `ms`, or at the next `#poke`. */
  async #nap(ms: number): Promise<void> {
    const { done, wake } = nap(ms);
    this.#naps.add(wake);
    await done;
    this.#naps.delete(wake);
  }

  /** One take; its alert's try runs on its own, and the next takes start. */
  async #takeOne(processor: AlertProcessor): Promise<void> {
    const token = this.#token();
    const started = Date.now();
    let taken: StoredAlert | undefined;
    try {
      taken = await this.store.take({ token, leaseMs: this.#leaseMs });
      this.#storeUp(processor);
    } catch (error) {
      this.#taking--;
      if (this.#stopping) return;
      this.#storeFailed(processor, error);
      this.#drained = true;
      await this.#nap(STORE_BACKOFF_MS);
      this.#fill();
      return;
    }
    this.#taking--;
    // Taken while stopping: it runs all the same (close waits for it), cheaper than a stall.
    if (taken !== undefined) {
      this.#drained = false;
      void this.#run(processor, taken, token);
    } else {
      this.#drained = true;
      if (!this.#stopping && Date.now() - started < INSTANT_MS && this.#pollIntervalMs > 0) {
        await this.#nap(this.#pollIntervalMs);
      }
    }
    this.#fill();
  }

  /** The consuming pump's slots: a completion takes the next alert while this process consumes. */
  readonly #pumping: RunMode = { chains: () => this.#consuming && !this.#stopping };

  async sweep(options: SweepOptions): Promise<SweepResult> {
    const processor = this.#processor;
    const budgetMs = (options as Partial<SweepOptions> | undefined)?.budgetMs;
    if (
      typeof budgetMs !== 'number' ||
      !Number.isInteger(budgetMs) ||
      budgetMs < MIN_SWEEP_BUDGET_MS
    ) {
      throw new TypeError(
        `sweep needs budgetMs, a whole number of milliseconds of at least ${String(MIN_SWEEP_BUDGET_MS)} ` +
          '(the time for a take, a try and its verdict).',
      );
    }
    if (processor === undefined) throw new TypeError('This queue is not attached to a receiver.');
    if (this.#closed !== undefined) throw new Error('The queue is closed.');
    const lastTakeAt = Date.now() + budgetMs - Math.floor(budgetMs / 5);
    const tally = { completed: 0, retried: 0, failed: 0 };
    const mode: RunMode = {
      chains: () => !this.#stopping && Date.now() < lastTakeAt,
      stored: (outcome) => {
        if (outcome === 'completed') tally.completed++;
        else if (outcome === 'retry') tally.retried++;
        else tally.failed++;
      },
    };
    const failed = (error: unknown): Error =>
      new Error(`The ${this.kind} store failed during the sweep: ${describe(error)}`, {
        cause: error,
      });
    // The reclaim runs beside the first takes, not before them: an invocation's sweep takes the
    // alert it just accepted without waiting for a reclaim's round trips. What the reclaim puts
    // back is taken by a second round once it is done.
    const reclaim = (async () => {
      try {
        return (await this.store.reclaimExpired?.()) ?? 0;
      } catch (error) {
        throw failed(error);
      }
    })();
    const slot = async (onTaken?: () => void): Promise<void> => {
      while (mode.chains()) {
        const token = this.#token();
        let taken: StoredAlert | undefined;
        try {
          taken = await this.store.take({ token, leaseMs: this.#leaseMs, wait: false });
        } catch (error) {
          throw failed(error);
        }
        if (taken === undefined) return;
        onTaken?.();
        onTaken = undefined;
        await this.#run(processor, taken, token, mode);
      }
    };
    // One take first; the other slots join once it found an alert (an invocation's sweep usually
    // finds only the alert it just accepted: nine takes racing for it would only slow its start).
    const slots = async (): Promise<void> => {
      let others: Promise<Error | undefined> | undefined;
      const more = (): void => {
        // Settled at once (never an unhandled rejection while the first slot still runs).
        others = Promise.all(Array.from({ length: processor.concurrency - 1 }, () => slot())).then(
          () => undefined,
          (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
        );
      };
      await slot(more);
      const error = await others;
      if (error !== undefined) throw error;
    };
    const [reclaimed] = await Promise.all([reclaim, slots()]);
    if (reclaimed > 0) {
      this.#poke();
      await slots();
    }
    let left: number;
    try {
      left = (await this.store.counts()).waiting;
    } catch (error) {
      throw failed(error);
    }
    return { ...tally, left };
  }

  /** A fresh lease token of this process. */
  #token(): string {
    return `${this.#instance}:${String(++this.#tokens)}`;
  }

  /**
   * Runs a taken alert's try, and, while this process is consuming, the alerts its completions
   * took next (`completeAndTake`: one round trip per alert), all in one slot.
   */
  async #run(
    processor: AlertProcessor,
    taken: StoredAlert,
    token: string,
    mode: RunMode = this.#pumping,
  ): Promise<void> {
    this.#running++;
    try {
      let next: Taken | undefined = { taken, token };
      while (next !== undefined) next = await this.#runOne(processor, next.taken, next.token, mode);
    } finally {
      this.#running--;
      this.#fill(); // a slot is free
    }
  }

  /**
   * One try of a taken alert, its lease renewed until its verdict is stored; resolves with the
   * alert its completion took next, if any. Core computes the stall count of a takeover here and
   * writes it before the try (a poison alert that kills every taker is counted all the same).
   */
  async #runOne(
    processor: AlertProcessor,
    taken: StoredAlert,
    token: string,
    mode: RunMode,
  ): Promise<Taken | undefined> {
    let chained: Taken | undefined;
    const lost = new AbortController();
    const lease = this.#renewLease(processor, taken, token, lost);
    try {
      let stalls = taken.stalls;
      if (taken.lapsed) {
        stalls += 1;
        if (!(await this.#recordStall(processor, taken, token, stalls))) return undefined;
      }
      const input = processor.input(taken.entry);
      const stored = { tries: taken.tries, succeeded: taken.succeeded, stalls };
      const apply = async (verdict: TryVerdict): Promise<boolean> => {
        const { written, next } = await this.#store(processor, taken, token, verdict, mode);
        chained = next;
        if (written) mode.stored?.(verdict.outcome);
        return written;
      };
      await runStoredTry(input, stored, this.#maxStalls, apply, { signal: lost.signal, stalls });
    } catch (error) {
      processor.logger.error(
        { id: taken.entry.id, err: error },
        `churn-risk: the try of alert ${taken.entry.id} failed unexpectedly`,
      );
    } finally {
      clearInterval(lease);
    }
    if (chained !== undefined) this.#drained = false;
    return chained;
  }

  /** Writes the stall count of a takeover; false when the lease is already gone (or the store). */
  async #recordStall(
    processor: AlertProcessor,
    taken: StoredAlert,
    token: string,
    stalls: number,
  ): Promise<boolean> {
    try {
      if (await this.store.extend(taken.id, token, this.#leaseMs, stalls)) return true;
      processor.logger.warn(
        { id: taken.entry.id },
        `churn-risk: the lease on alert ${taken.entry.id} was lost before its try started`,
      );
    } catch (error) {
      // Not run: the alert stays leased until its lease ends, then it is taken over again.
      this.#storeFailed(processor, error);
    }
    return false;
  }

  /**
   * Renews the lease every half of it. The lease is lost when a renewal is refused, or when the
   * renewal timer fires after the lease's end (this process was frozen or starved past it, and
   * another may have taken the alert over): `lost` aborts (the handlers' `context.signal`), and
   * that is logged once.
   */
  #renewLease(
    processor: AlertProcessor,
    taken: StoredAlert,
    token: string,
    lost: AbortController,
  ): ReturnType<typeof setInterval> {
    let leaseEnd = Date.now() + this.#leaseMs;
    const lose = (why: string): void => {
      if (lost.signal.aborted) return;
      lost.abort(new Error(`The lease on alert ${taken.entry.id} was lost (${why}).`));
      processor.logger.warn(
        { id: taken.entry.id },
        `churn-risk: the lease on alert ${taken.entry.id} was lost (${why}; another process may ` +
          'take it over); this try will not be stored',
      );
    };
    const timer = setInterval(
      () => {
        if (lost.signal.aborted) return;
        const now = Date.now();
        if (now >= leaseEnd) {
          lose(`its renewal came ${String(now - leaseEnd)} ms after its end`);
          return;
        }
        this.store.extend(taken.id, token, this.#leaseMs).then(
          (kept) => {
            if (kept) leaseEnd = now + this.#leaseMs;
            else lose('a renewal was refused');
          },
          () => undefined, // the store is down: the verdict's write says so
        );
      },
      Math.max(1, Math.floor(this.#leaseMs / 2)),
    );
    return timer;
  }

  /**
   * Stores a try's verdict, with the tries core counted; `written` is true when it went through.
   * A completion takes the next alert in the same round trip while this process consumes. A store
   * error is retried (the lease is still renewed meanwhile) until the lease would have run out:
   * then the alert is left to be taken over, and nothing is reported for it here.
   */
  async #store(
    processor: AlertProcessor,
    taken: StoredAlert,
    token: string,
    verdict: TryVerdict,
    mode: RunMode,
  ): Promise<{ written: boolean; next: Taken | undefined }> {
    const tries = taken.tries + 1;
    const write = async (): Promise<{ written: boolean; next: Taken | undefined }> => {
      if (verdict.outcome === 'completed') {
        if (!mode.chains()) {
          return { written: await this.store.complete(taken.id, token), next: undefined };
        }
        const nextToken = this.#token();
        const done = await this.store.completeAndTake(taken.id, token, {
          token: nextToken,
          leaseMs: this.#leaseMs,
        });
        const next = done.next === undefined ? undefined : { taken: done.next, token: nextToken };
        return { written: done.completed, next };
      }
      const { error, succeeded } = verdict;
      const written =
        verdict.outcome === 'failed'
          ? await this.store.fail(taken.id, token, { error, succeeded, tries })
          : await this.store.scheduleRetry(taken.id, token, {
              delayMs: verdict.delayMs,
              tries,
              succeeded,
              error,
            });
      return { written, next: undefined };
    };
    const deadline = Date.now() + this.#leaseMs;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        const result = await write();
        if (!result.written) {
          processor.logger.warn(
            { id: taken.entry.id, outcome: verdict.outcome },
            `churn-risk: the outcome of alert ${taken.entry.id} was not stored: its lease was ` +
              'lost and another process takes it over',
          );
        }
        return result;
      } catch (error) {
        if (Date.now() + wait > deadline) {
          processor.logger.error(
            { id: taken.entry.id, err: error },
            `churn-risk: the outcome of alert ${taken.entry.id} could not be stored ` +
              `(${describe(error)}); it will be taken over once its lease expires`,
          );
          return { written: false, next: undefined };
        }
        await nap(wait).done;
      }
    }
  }

  /** Puts back the alerts whose taker died. */
  async #reclaim(): Promise<void> {
    const processor = this.#processor;
    if (this.#reclaiming || this.#stopping || processor === undefined) return;
    this.#reclaiming = true;
    try {
      const reclaimed = (await this.store.reclaimExpired?.()) ?? 0;
      this.#storeUp(processor);
      if (reclaimed > 0) this.#poke();
    } catch (error) {
      // `close()` may have been called during the await (the narrowing above does not see it).
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (!this.#stopping) this.#storeFailed(processor, error);
    } finally {
      this.#reclaiming = false;
    }
  }

  #storeFailed(processor: AlertProcessor, error: unknown): void {
    if (this.#storeDown) return;
    this.#storeDown = true;
    processor.logger.error(
      { queue: this.kind, err: error },
      `churn-risk: the ${this.kind} store does not answer (${describe(error)}); alerts are taken ` +
        'again once it does',
    );
  }

  #storeUp(processor: AlertProcessor): void {
    if (!this.#storeDown) return;
    this.#storeDown = false;
    processor.logger.warn({ queue: this.kind }, `churn-risk: the ${this.kind} store answers again`);
  }
}

/**
 * A durable queue for `createReceiver({ queue })` (SPEC 17): alerts are accepted into `store`
 * (identity and job in one atomic step, before the `202`), and every consuming process takes
 * them from it under a lease and runs core's one try protocol, storing each verdict. A process
 * that dies loses its alerts' leases, and another process takes them over. Back ends
 * (`@churn-risk/redis`, `@churn-risk/postgres`) only implement `AlertStore`.
 *
 * @example
 * const queue = createDurableQueue(createMemoryStore()); // a single-process store, for tests
 * const receiver = createReceiver({ secret, queue });
 */
export function createDurableQueue<S extends AlertStore>(
  store: S,
  options: DurableQueueOptions = {},
): DurableQueue<S> {
  return new DurableAlertQueue(store, options);
}
