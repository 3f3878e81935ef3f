import { RENAMED_OPTIONS, refuseUnknownOptions } from '../options/known-options.js';
import type {
  AcceptOptions,
  AcceptResult,
  AcceptedAlert,
  AlertProcessor,
  AlertQueue,
  KeepAlive,
  AlertRecord,
} from '../queue-port/alert-queue.js';
import { integerOption } from '../options/integer-option.js';
import { createMemoryDedupeStore, DEFAULT_DEDUPE_MAX_ENTRIES } from './memory-dedupe-store.js';
import type { DedupeStore } from '../receiver/types.js';
import { KeepAliveGuard } from './keep-alive.js';
import { andThen, isPromiseLike, type MaybePromise } from './maybe-promise.js';
import { NONE, runTryAndApply, type TriesSoFar } from './try-protocol.js';
import type { TryInput, TryLease, TryVerdict } from '../queue-port/try-types.js';
import { UserLines, type LineAlert } from './user-lines.js';
import { createWorkQueue, type Job } from './work-queue.js';

/** How often an own-turn alert waiting for its user's turn looks again, in ms. */
const TURN_POLL_MS = 10;

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
 * One accepted alert in the work queue, and the store of its tries: each runs through
 * `runTryAndApply`, the durable queues' engine too, from the state this job keeps (`tries`, the
 * try to run, 0 for the first; `succeeded`, the record of the handlers that succeeded), and
 * `#apply` keeps its verdict. Synchronous when the first try's handlers all return synchronously
 * and succeed.
 */
class MemoryJob implements LineAlert, AcceptedAlert, TriesSoFar {
  ready = false;
  startWhenReady = false;
  failures = 0;
  tries = 0;
  succeeded: readonly string[] = NONE;
  readonly done: Promise<void>;
  readonly user: string;
  readonly at: number;
  readonly sequence: number;
  #resolveDone!: () => void;
  readonly #entry: AlertRecord<'accepted'>;
  readonly #processor: AlertProcessor;
  readonly #keepAlive: KeepAlive | undefined;
  /** The lines of the order per user, when the receiver runs in it. */
  readonly #lines: UserLines | undefined;
  #input!: TryInput;
  #guard: KeepAliveGuard | undefined;

  constructor(
    entry: AlertRecord<'accepted'>,
    processor: AlertProcessor,
    keepAlive: KeepAlive | undefined,
    lines: UserLines | undefined,
  ) {
    this.#entry = entry;
    this.#processor = processor;
    this.#keepAlive = keepAlive;
    this.#lines = lines;
    this.user = entry.alert.userId;
    this.at = lines === undefined ? 0 : Date.parse(entry.alert.triggeredAt);
    this.sequence = lines?.sequence() ?? 0;
    this.done = new Promise<void>((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  run(): unknown {
    const input = (this.#input = this.#processor.input(this.#entry));
    const keepAlive = this.#keepAlive;
    if (keepAlive === undefined)
      return runTryAndApply(input, this, MemoryJob.#apply, this.#lease());
    const guard = (this.#guard = new KeepAliveGuard(input, keepAlive, this));
    return guard.run(() => runTryAndApply(input, this, MemoryJob.#apply, this.#lease()));
  }

  /** In order per user, the lease of a try starting now: whether the alert is superseded. */
  #lease(): TryLease | undefined {
    return this.#lines?.lease(this.user, this.#entry.alert);
  }

  /**
   * In order per user, an alert that starts in its own turn (a platform's `waitUntil`) waits,
   * on timers of its own, until no alert of its user runs and none older waits.
   */
  runInTurn(lines: UserLines): unknown {
    if (lines.tryStart(this)) return this.run();
    return new Promise<void>((resolve) => setTimeout(resolve, TURN_POLL_MS)).then(() =>
      this.runInTurn(lines),
    );
  }

  /**
   * The verdict of a try, kept in this process. `completed` and `failed` go through (a `failed`
   * one is then reported, and counted in `failures`), unless the keep-alive guard already
   * reported the alert cut off: one report per alert. A `retry` is kept by a timer that runs the
   * next try, and what it gives settles once the tries after it are done (the job runs until the
   * alert is done). The timer is deliberately not `unref`'d: a handler waiting for its retry is
   * work in flight, and keeps a Node process alive until it has run (use `close()`). Under a
   * keep-alive budget, a retry whose delay would end past the cut-off point is not kept: the
   * alert is reported cut off instead.
   */
  static #apply(verdict: TryVerdict, job: MemoryJob): MaybePromise<boolean> {
    if (verdict.outcome === 'completed') return true;
    const guard = job.#guard;
    if (verdict.outcome === 'failed') {
      if (guard?.claim() === false) return false;
      job.failures = verdict.failures.length;
      return true;
    }
    job.succeeded = verdict.succeeded;
    if (guard?.allows(verdict.delayMs) === false) {
      return guard.cutOff(verdict.error).then(() => false);
    }
    return new Promise((resolve) => setTimeout(resolve, verdict.delayMs)).then(() => {
      if (guard?.cut === true) return false;
      job.tries += 1;
      return andThen(runTryAndApply(job.#input, job, MemoryJob.#apply, job.#lease()), () => true);
    });
  }

  finished(): void {
    // A cut-off counts as one failure (whether the budget ended during a try or before a retry).
    if (this.#guard?.cut === true) this.failures = 1;
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
  #lines: UserLines | undefined;

  constructor(maxQueue: number, store: DedupeStore | undefined, ttlMs: number) {
    this.#maxQueue = maxQueue;
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  attach(processor: AlertProcessor): void {
    if (this.#processor !== undefined) throw new TypeError('This queue is already attached.');
    this.#processor = processor;
    if (processor.order === 'per-user') {
      // The lines hold the waiting alerts (and count them against maxQueue); the work queue holds
      // at most one turn per user, and is never full.
      const work = (this.#work = createWorkQueue(processor.concurrency, Number.MAX_SAFE_INTEGER));
      this.#lines = new UserLines(
        work,
        this.#ttlMs || MEMORY_QUEUE_DEFAULTS.dedupeTtlMs,
        MEMORY_QUEUE_DEFAULTS.dedupeMaxEntries,
      );
      return;
    }
    this.#work = createWorkQueue(processor.concurrency, this.#maxQueue);
  }

  accept(entry: AlertRecord<'accepted'>, options?: AcceptOptions): MaybePromise<AcceptResult> {
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
    return this.#lines?.waiting ?? this.#work?.queued ?? 0;
  }

  get running(): number {
    return this.#work?.running ?? 0;
  }

  #push(
    entry: AlertRecord<'accepted'>,
    options: AcceptOptions | undefined,
  ): MaybePromise<AcceptResult> {
    const lines = this.#lines;
    const job = new MemoryJob(entry, this.#processor as AlertProcessor, options?.keepAlive, lines);
    if (lines === undefined) {
      if (this.#attached().tryPush(job, options?.ownTurn === true)) return job;
    } else if (this.#pushInLine(job, lines, options?.ownTurn === true)) {
      return job;
    }
    // No room: forget the identity, so that the service's redelivery is processed.
    const released = this.release(entry.id);
    return andThen(released, () => 'full' as const);
  }

  /** Order per user: the alert joins its user's line (see user-lines.ts). False when full. */
  #pushInLine(job: MemoryJob, lines: UserLines, ownTurn: boolean): boolean {
    const work = this.#attached();
    const { concurrency } = this.#processor as AlertProcessor;
    if (work.running >= concurrency && lines.waiting >= this.#maxQueue) return false;
    lines.accepted(job.user, job.at);
    if (!ownTurn) return lines.push(job);
    // Started by a deferral of its own request, then waiting for its user's turn on its own
    // timers: never run from another request's continuation.
    lines.wait(job);
    const turn: Job = {
      ready: false,
      startWhenReady: false,
      run: () => job.runInTurn(lines),
      finished: () => {
        job.finished();
        lines.ended(job);
      },
    };
    if (work.tryPush(turn, true)) return true;
    lines.drop(job);
    return false;
  }

  #attached(): ReturnType<typeof createWorkQueue> {
    if (this.#work === undefined) throw new TypeError('The queue is not attached to a receiver.');
    return this.#work;
  }
}
