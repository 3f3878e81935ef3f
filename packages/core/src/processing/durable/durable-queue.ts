import type {
  AcceptOptions,
  AlertProcessor,
  AlertQueue,
  QueueHealth,
  AlertRecord,
  SweepOptions,
  SweepResult,
} from '../../queue-port/alert-queue.js';
import { MIN_SWEEP_BUDGET_MS } from '../../queue-port/alert-queue.js';
import { integerOption } from '../../options/integer-option.js';
import { RENAMED_OPTIONS, refuseUnknownOptions } from '../../options/known-options.js';
import { AlertRunner, LeaseKeeper, type RunMode } from './alert-runner.js';
import {
  orderKeyOf,
  type AlertStore,
  type FailedAlertStore,
  type FailedListOptions,
  type QueueCounts,
  type StoreAcceptOptions,
} from './alert-store.js';
import { DurableQueueBase, withTimeout } from './queue-base.js';
import { sweepDue } from './sweep.js';
import { describe, StoreOutage, TakeLoop, type Taken } from './take-loop.js';

const POLL_MS = 50;

/**
 * How `idle` and `close` wait: resolves once `check` is true, asking every 50 ms. An aborted
 * `signal` stops asking (the promise then never settles). A `check` that throws counts as false.
 */
function pollUntil(check: () => boolean | Promise<boolean>, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const stopped = (): boolean => signal?.aborted === true;
    const tick = async (): Promise<void> => {
      if (stopped()) return;
      let done = false;
      try {
        done = await check();
      } catch {
        done = false;
      }
      if (done) resolve();
      else if (!stopped()) setTimeout(() => void tick(), POLL_MS);
    };
    // First check on a later microtask: work scheduled in this turn (a worker being started) is
    // then in place.
    void Promise.resolve().then(tick);
  });
}

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
  /**
   * True once a receiver with `consume: 'invocation'` is attached: no worker takes alerts, and a
   * retried alert runs at the next invocation's or scheduled sweep (the ops page says so).
   */
  readonly invocationMode: boolean;
}

/** The defaults of `createDurableQueue`, the same for every durable back end. */
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
/** How long `health()` and `depth()` wait for the store. */
const STATUS_TIMEOUT_MS = 2_000;

/** The options checked (a `TypeError` names a wrong one), with the defaults filled in. */
function resolveOptions(options: DurableQueueOptions): Required<DurableQueueOptions> {
  refuseUnknownOptions('createDurableQueue', options, OPTION_KEYS, RENAMED_OPTIONS);
  const defaults = DURABLE_QUEUE_DEFAULTS;
  const leaseMs = integerOption('leaseMs', options.leaseMs ?? defaults.leaseMs, 1);
  return {
    leaseMs,
    reclaimIntervalMs: integerOption(
      'reclaimIntervalMs',
      options.reclaimIntervalMs ?? Math.min(leaseMs, 30_000),
      1,
    ),
    maxStalls: integerOption('maxStalls', options.maxStalls ?? defaults.maxStalls, 0),
    dedupeTtlMs: integerOption('dedupeTtlMs', options.dedupeTtlMs ?? defaults.dedupeTtlMs, 1),
    enqueueTimeoutMs: integerOption(
      'enqueueTimeoutMs',
      options.enqueueTimeoutMs ?? defaults.enqueueTimeoutMs,
      1,
    ),
    pollIntervalMs: integerOption(
      'pollIntervalMs',
      options.pollIntervalMs ?? defaults.pollIntervalMs,
      0,
    ),
  };
}

/**
 * A pull-based durable queue: the accept goes to the store (`DurableQueueBase`), a consuming
 * process takes alerts in its `TakeLoop`, each alert runs in `AlertRunner` under a lease that
 * `LeaseKeeper` renews, and `sweep` runs what is due within a budget (sweep.ts).
 */
class DurableAlertQueue<S extends AlertStore> extends DurableQueueBase implements DurableQueue<S> {
  readonly store: S;
  protected readonly notRecorded: string;
  readonly #options: Required<DurableQueueOptions>;
  readonly #leases: LeaseKeeper;
  readonly #outage: StoreOutage;
  readonly #runner: AlertRunner;
  /** Takes alerts once `consume` was called in this process. */
  #loop: TakeLoop | undefined;
  #closing: Promise<void> | undefined;

  constructor(store: S, options: DurableQueueOptions) {
    const resolved = resolveOptions(options);
    super(resolved.enqueueTimeoutMs);
    this.store = store;
    this.notRecorded = `The ${store.kind} store did not record the alert`;
    this.#options = resolved;
    this.#leases = new LeaseKeeper(store, resolved.leaseMs);
    this.#outage = new StoreOutage(store.kind);
    this.#runner = new AlertRunner(store, this.#leases, this.#outage, resolved);
  }

  get kind(): string {
    return this.store.kind;
  }

  protected record(
    entry: AlertRecord<'accepted'>,
    options: AcceptOptions | undefined,
  ): Promise<'accepted' | 'duplicate'> {
    const { dedupeTtlMs } = this.#options;
    const stored: StoreAcceptOptions =
      options?.first === true ? { dedupeTtlMs, first: true } : { dedupeTtlMs };
    if (this.processor?.order === 'per-user') stored.order = orderKeyOf(entry);
    return this.store.accept(entry, stored);
  }

  protected override accepted(): void {
    this.#loop?.poke(); // a consuming process takes it at once
  }

  consume(): void {
    const processor = this.processor;
    if (processor === undefined || this.#loop !== undefined || this.closed) return;
    const pumping: RunMode = { chains: () => !this.closed, tookNext: () => this.#loop?.found() };
    this.#loop = new TakeLoop({
      store: this.store,
      leases: this.#leases,
      outage: this.#outage,
      processor,
      leaseMs: this.#options.leaseMs,
      pollIntervalMs: this.#options.pollIntervalMs,
      reclaimIntervalMs: this.#options.reclaimIntervalMs,
      running: () => this.running,
      run: (taken) => void this.#run(processor, taken, pumping),
    });
    this.#loop.start();
  }

  idle(signal?: AbortSignal): Promise<void> {
    // A consuming process drains the shared queue: nothing waiting, delayed or running anywhere;
    // a process that only accepts has nothing of its own to wait for.
    return pollUntil(async () => {
      if (this.running > 0) return false;
      if (this.#loop === undefined) return true;
      const counts = await this.store.counts();
      return counts.waiting + counts.active + counts.delayed === 0;
    }, signal);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.refuseAccepts();
      // The loop ends after its current takes (a store whose take waits for work ends the wait),
      // and every try it started has stored its verdict before the store is closed.
      await (this.#loop?.stop() ?? this.store.stopTaking?.());
      await pollUntil(() => this.running === 0);
      await this.store.close();
    })();
    return this.#closing;
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

  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]> {
    return this.store.failed(options);
  }

  retry(id: string): Promise<void> {
    return this.store.retry(id).then(() => {
      this.#loop?.poke();
    });
  }

  retryAll(): Promise<number> {
    return this.store.retryAll().then((count) => {
      this.#loop?.poke();
      return count;
    });
  }

  counts(): Promise<QueueCounts> {
    return this.store.counts();
  }

  async sweep(options: SweepOptions): Promise<SweepResult> {
    const processor = this.processor;
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
    if (this.closed) throw new Error('The queue is closed.');
    const parts = {
      store: this.store,
      leases: this.#leases,
      processor,
      leaseMs: this.#options.leaseMs,
      closing: () => this.closed,
      run: (taken: Taken, mode: RunMode) => this.#run(processor, taken, mode),
      poke: () => this.#loop?.poke(),
    };
    return sweepDue(parts, budgetMs);
  }

  /** Runs a taken alert, and the alerts its completions take, in a slot counted in `running`. */
  async #run(processor: AlertProcessor, taken: Taken, mode: RunMode): Promise<void> {
    try {
      await this.counted(() => this.#runner.run(processor, taken, mode));
    } finally {
      this.#loop?.fill(); // a slot is free
    }
  }
}

/**
 * A durable queue for `createReceiver({ queue })`: alerts are accepted into `store`
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
