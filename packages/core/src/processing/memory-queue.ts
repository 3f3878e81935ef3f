import { RENAMED_OPTIONS, refuseUnknownOptions } from '../options/known-options.js';
import type {
  AcceptOptions,
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertQueue,
  KeepAlive,
  QueuedAlert,
} from '../queue-port/alert-queue.js';
import { integerOption } from '../options/integer-option.js';
import { createMemoryDedupeStore, DEFAULT_DEDUPE_MAX_ENTRIES } from './memory-dedupe-store.js';
import type { DedupeStore } from '../receiver/types.js';
import { KeepAliveGuard } from './keep-alive.js';
import { andThen, isPromiseLike, type MaybePromise } from './maybe-promise.js';
import { NONE, reportTry, runTry } from './try-protocol.js';
import type { TryInput, TryVerdict } from '../queue-port/try-types.js';
import { createWorkQueue, type Job } from './work-queue.js';

/** Options of `createMemoryQueue`. */
export interface MemoryQueueOptions {
  /** Alerts waiting for a free slot; beyond it `accept` answers `'full'`. Default 10,000. */
  maxQueue?: number;
  /**
   * Duplicate suppression: the store, or `false` for none. Default an in-memory LRU of 100,000
   * identities.
   */
  dedupe?:
    | false
    | {
        /** A shared store instead of the in-memory LRU. */
        store?: DedupeStore;
        /** Most identities the in-memory LRU keeps. Default 100,000. */
        maxEntries?: number;
        /** The in-memory LRU's clock in milliseconds, like `Date.now` (for tests). */
        now?: () => number;
      };
  /** How long an alert identity is remembered for de-duplication, in ms. Default 72 hours. */
  dedupeTtlMs?: number;
}

/**
 * Waits `ms` milliseconds. The timer is deliberately not `unref`'d: a handler waiting for its retry
 * is work in flight, and keeps a Node process alive until it has run (use `close()` to finish).
 */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * After a try that was not final: the retries in this process (timers), then the report. Under a
 * keep-alive `guard`, no retry starts whose delay ends past its cut-off point, and nothing is
 * reported once it reported the cut-off.
 */
async function retryInProcess(
  input: TryInput,
  first: TryVerdict,
  guard?: KeepAliveGuard,
): Promise<number> {
  let verdict = first;
  let tries = 0;
  while (verdict.outcome === 'retry') {
    if (guard !== undefined) {
      guard.succeeded = verdict.succeeded;
      if (!guard.allows(verdict.delayMs)) return guard.cutOff(verdict.error);
    }
    await sleep(verdict.delayMs);
    if (guard?.cut === true) return 0;
    tries += 1;
    if (guard !== undefined) guard.attempt = tries;
    verdict = await runTry(input, tries, verdict.succeeded);
  }
  if (verdict.outcome === 'completed' || guard?.claim() === false) return 0;
  await reportTry(input, tries, verdict);
  return verdict.failures.length;
}

/** The first try, then `retryInProcess` unless it completed. */
function triesOf(input: TryInput, guard: KeepAliveGuard | undefined): MaybePromise<number> {
  const first = runTry(input, 0, NONE);
  if (!isPromiseLike(first)) {
    return first.outcome === 'completed' ? 0 : retryInProcess(input, first, guard);
  }
  return first.then((verdict) =>
    verdict.outcome === 'completed' ? 0 : retryInProcess(input, verdict, guard),
  );
}

/**
 * Every try of an alert in this process: `runTry`, and each `retry` verdict applied with a timer.
 * Never throws or rejects; gives the number of handlers that failed after their retries,
 * synchronously when the first try's handlers all returned synchronously and succeeded.
 * `guard`: the alert is kept alive by a platform `waitUntil` with a budget.
 */
function runAlert(input: TryInput, guard: KeepAliveGuard | undefined): MaybePromise<number> {
  if (guard !== undefined) return guard.run(() => triesOf(input, guard));
  return triesOf(input, undefined);
}

/** One accepted alert in the work queue: runs its handlers, counts what failed. */
class MemoryJob implements Job, AcceptedAlert {
  ready = false;
  startWhenReady = false;
  failures = 0;
  readonly done: Promise<void>;
  #resolveDone!: () => void;
  readonly #entry: QueuedAlert;
  readonly #processor: AlertProcessor;
  readonly #keepAlive: KeepAlive | undefined;

  constructor(entry: QueuedAlert, processor: AlertProcessor, keepAlive: KeepAlive | undefined) {
    this.#entry = entry;
    this.#processor = processor;
    this.#keepAlive = keepAlive;
    this.done = new Promise<void>((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  run(): unknown {
    const input = this.#processor.input(this.#entry);
    const keepAlive = this.#keepAlive;
    const failed = runAlert(
      input,
      keepAlive === undefined ? undefined : new KeepAliveGuard(input, keepAlive),
    );
    if (!isPromiseLike(failed)) {
      this.failures = failed;
      return undefined;
    }
    return failed.then((count) => {
      this.failures = count;
    });
  }

  finished(): void {
    this.#resolveDone();
  }
}

/** The in-memory queue's defaults (also the receiver's, `RECEIVER_DEFAULTS`). */
export const MEMORY_QUEUE_DEFAULTS = Object.freeze({
  maxQueue: 10_000,
  dedupeTtlMs: 72 * 3_600_000,
  dedupeMaxEntries: DEFAULT_DEDUPE_MAX_ENTRIES,
});

/**
 * The default queue: alerts wait in a bounded in-process queue and run on the receiver's
 * `concurrency` slots; identities are claimed in a `DedupeStore` (in memory by default). Fast, but
 * an alert answered `202` lives only in this process until its handlers have run: use a durable
 * queue (`@churn-risk/redis`) where a crash or a deploy must not lose it.
 *
 * @example
 * const receiver = createReceiver({ secret, queue: createMemoryQueue({ maxQueue: 1000 }) });
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): AlertQueue {
  refuseUnknownOptions('createMemoryQueue', options, ['maxQueue', 'dedupe', 'dedupeTtlMs']);
  const maxQueue = integerOption('maxQueue', options.maxQueue ?? MEMORY_QUEUE_DEFAULTS.maxQueue, 0);
  if (options.dedupe === false) {
    if (options.dedupeTtlMs !== undefined) {
      throw new TypeError('dedupeTtlMs has no use with dedupe: false (no identity is kept).');
    }
    return new MemoryQueue(maxQueue, undefined, 0);
  }
  const dedupe = options.dedupe ?? {};
  refuseUnknownOptions('dedupe', dedupe, ['store', 'maxEntries', 'now'], RENAMED_OPTIONS);
  const ttlMs = integerOption(
    'dedupeTtlMs',
    options.dedupeTtlMs ?? MEMORY_QUEUE_DEFAULTS.dedupeTtlMs,
    1,
  );
  const maxEntries = integerOption(
    'dedupe.maxEntries',
    dedupe.maxEntries ?? MEMORY_QUEUE_DEFAULTS.dedupeMaxEntries,
    1,
  );
  const store =
    dedupe.store ??
    createMemoryDedupeStore({
      maxEntries,
      ...(dedupe.now === undefined ? {} : { now: dedupe.now }),
    });
  return new MemoryQueue(maxQueue, store, ttlMs);
}

class MemoryQueue implements AlertQueue {
  readonly kind = 'memory';
  readonly processesInline = true;
  #processor: AlertProcessor | undefined;
  #work: ReturnType<typeof createWorkQueue> | undefined;
  readonly #maxQueue: number;
  readonly #store: DedupeStore | undefined;
  readonly #ttlMs: number;

  constructor(maxQueue: number, store: DedupeStore | undefined, ttlMs: number) {
    this.#maxQueue = maxQueue;
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  attach(processor: AlertProcessor): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
    this.#work = createWorkQueue(processor.concurrency, this.#maxQueue);
  }

  accept(entry: QueuedAlert, options?: AcceptOptions): MaybePromise<AcceptResult> {
    const store = this.#store;
    if (store === undefined) return this.#push(entry, options);
    // A throwing store becomes a rejection: the receiver answers 503 so that the sender retries.
    const claimed = store.claim(entry.id, this.#ttlMs);
    if (!isPromiseLike(claimed)) return claimed ? this.#push(entry, options) : 'duplicate';
    return andThen(claimed, (isNew) => (isNew ? this.#push(entry, options) : 'duplicate'));
  }

  release(id: string): MaybePromise<void> {
    return this.#store?.release(id);
  }

  consume(): void {
    // Alerts run as they are accepted; there is nothing to start.
  }

  idle(signal?: AbortSignal): Promise<void> {
    return this.#attached().idle(signal);
  }

  close(signal?: AbortSignal): Promise<void> {
    return this.idle(signal);
  }

  get queued(): number {
    return this.#work?.queued ?? 0;
  }

  get running(): number {
    return this.#work?.running ?? 0;
  }

  #push(entry: QueuedAlert, options: AcceptOptions | undefined): MaybePromise<AcceptResult> {
    const job = new MemoryJob(entry, this.#processor as AlertProcessor, options?.keepAlive);
    if (this.#attached().tryPush(job, options?.ownTurn === true)) return job;
    // No room: forget the identity, so that the service's redelivery is processed.
    const released = this.release(entry.id);
    return andThen(released, () => 'full' as const);
  }

  #attached(): ReturnType<typeof createWorkQueue> {
    if (this.#work === undefined) throw new TypeError('The queue is not attached to a receiver.');
    return this.#work;
  }
}
