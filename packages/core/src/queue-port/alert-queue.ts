import type { AlertRecord } from './handler-types.js';
export type { AlertRecord } from './handler-types.js';
import type { Logger } from '../observability/logger.js';
import type { TryInput } from './try-types.js';

/**
 * What the queue answers for an alert: taken (an object whose `done` settles when this process
 * has finished its part), already seen (`'duplicate'`), or
 * refused for lack of room (`'full'`, answered `503 OVERLOADED`). A queue that cannot record the
 * alert (its store is down or slow) throws or rejects, which is also answered `503 OVERLOADED`.
 */
export type AcceptResult =
  | {
      /**
       * Settles (never rejects) when this process is done with the alert: after its handlers,
       * their retries and `onError` for a queue that processes in this process; at once for a
       * durable queue, whose workers process it later.
       */
      readonly done: Promise<void>;
      /** After `done`: handlers that failed after their retries (in-process queues only). */
      readonly failures?: number;
    }
  | 'duplicate'
  | 'full';

/** The taken member of `AcceptResult` (internal: the queues make it, the receiver reads it). */
export type AcceptedAlert = Exclude<AcceptResult, string>;

/**
 * The receiver's side of processing, handed to the queue by `attach`: the handlers and the retry
 * policy, which the queue runs through the one try protocol (`try-protocol.ts`).
 */
export interface AlertProcessor {
  /** Alerts one process runs at once: the receiver's `concurrency` option. */
  readonly concurrency: number;
  /**
   * The receiver's `order` option: `'per-user'` runs the alerts of one user one at a time, oldest
   * `triggeredAt` first, across every process sharing the queue's store; `'none'` (the default)
   * runs them as they come.
   */
  readonly order: 'none' | 'per-user';
  /** What the tries of `entry` need, with the handlers registered now. */
  input(entry: AlertRecord<'accepted'>): TryInput;
  /** The receiver's logger, for what a queue has to say beyond an alert's tries. */
  readonly logger: Logger;
}

/** Reachability of a queue's store, for `receiver.health()`. */
export interface QueueHealth {
  /** True when the store answered. */
  reachable: boolean;
  /** Why not, when it did not (never holds a secret or a connection string's password). */
  error?: string;
}

/**
 * Where a receiver's accepted alerts go and where its handlers take them from (the `queue` option
 * of `createReceiver`). Core makes both kinds: `createMemoryQueue` (the default) keeps alerts in
 * the process; `createDurableQueue(store)` runs them from an `AlertStore` shared by processes
 * (`@churn-risk/redis`, `@churn-risk/postgres`). A new back end implements `AlertStore`, not this.
 *
 * The receiver calls `attach` once at creation, `consume` once handlers are registered (unless
 * the receiver was created with `consume: false`), `accept` for each verified alert, and `close`
 * from `receiver.close`.
 */
export interface AlertQueue {
  /** A short name for messages and health output, e.g. `'memory'` or `'redis'`. */
  readonly kind: string;
  /** True when an accepted alert's `done` waits for its handlers (required by `mode: 'sync'`). */
  readonly processesInline: boolean;
  /**
   * True for a queue that stores alerts outside this process, where any process (of any deploy)
   * may run an alert's next try: the handlers' ids are then their identity in
   * the record of handlers that succeeded, and required as soon as there are two.
   */
  readonly durable?: boolean;
  /**
   * Gives the queue the receiver's processing, and how the receiver runs alerts (its `consume`
   * option: `'invocation'` when no worker takes them). Called once, before anything else.
   */
  attach(processor: AlertProcessor, how?: { consume?: boolean | 'invocation' }): void;
  /**
   * Records the identity and stores the alert, atomically: after a failure, neither is kept.
   * Synchronous when the store is.
   */
  accept(
    entry: AlertRecord<'accepted'>,
    options?: AcceptOptions,
  ): AcceptResult | Promise<AcceptResult>;
  /**
   * Forgets an identity, so that the service's redelivery is processed again (`mode: 'sync'`,
   * which only an in-process queue runs).
   */
  release?(id: string): void | Promise<void>;
  /** Starts taking alerts to process in this process. Idempotent. */
  consume(): void;
  /**
   * Resolves when this process has nothing queued or running (for a consuming durable queue: the
   * shared queue has no waiting, delayed or active job). An aborted `signal` stops the wait: the
   * promise then never settles and nothing is kept for it.
   */
  idle(signal?: AbortSignal): Promise<void>;
  /**
   * Stops taking alerts, waits for the ones running in this process, and releases what the queue
   * opened. A queue that processes in this process also finishes what is queued.
   */
  close(signal?: AbortSignal): Promise<void>;
  /** Alerts waiting and running in this process, for `receiver.stats`. */
  readonly queued: number;
  readonly running: number;
  /** Asks the store whether it answers. An in-process queue is always reachable. */
  health?(): Promise<QueueHealth>;
  /**
   * Alerts waiting in a shared store to be processed, by any process (waiting, and scheduled for a
   * retry), for the `churn_risk.queue.depth` gauge. Without it the gauge reads `queued`.
   */
  depth?(): Promise<number>;
  /**
   * Runs the alerts that are due now in this process, within a budget: a durable
   * pull-based queue only. See `Receiver.sweep`.
   */
  sweep?(options: SweepOptions): Promise<SweepResult>;
}

/** The shortest sweep budget, in ms: time for a take, a try and its verdict. */
export const MIN_SWEEP_BUDGET_MS = 1_000;

/** Options of a sweep (`receiver.sweep`). */
export interface SweepOptions {
  /**
   * How long the sweep may run, in ms (at least 1,000): it takes no alert in the last fifth of it,
   * and resolves once the tries it started have stored their verdicts.
   */
  budgetMs: number;
}

/** What a sweep did. */
export interface SweepResult {
  /** Alerts whose try completed. */
  completed: number;
  /** Alerts whose try failed and that wait for their next try (stored, due later). */
  retried: number;
  /** Alerts that failed after their last try (in the failed set, `onError` called). */
  failed: number;
  /** Alerts due now and not taken when the sweep ended (the budget ran out first). */
  left: number;
  /**
   * Milliseconds until the next delayed alert (a retry waiting for its delay) falls due, when the
   * sweep ended; undefined when none is delayed. A sweep before then finds nothing of it to run.
   */
  nextDueInMs: number | undefined;
}

/** How an alert is accepted. */
export interface AcceptOptions {
  /**
   * The delivery came with a platform `waitUntil` (Workers, Vercel): its processing must start
   * in a turn that its own request scheduled, never from another request's continuation (workerd
   * cancels work that a finished request started for another). An in-process queue then runs it
   * at once on a slot of its own, outside `concurrency` (the platform bounds the requests in
   * flight). A durable queue may ignore it: its `done` settles once the store holds the alert.
   */
  ownTurn?: boolean;
  /**
   * The platform's budget for the `waitUntil` that keeps the alert alive (`keepAliveBudgetMs`),
   * from `startedAt` (`Date.now()` at the acceptance). An in-process queue runs the alert's tries
   * under it (no silent cut-off: it is reported as `CUT_OFF`). A durable queue ignores it: no budget applies there.
   */
  keepAlive?: KeepAlive;
  /**
   * The receiver runs the due alerts right after this accept, within the invocation that accepted
   * it (`consume: 'invocation'`): a durable queue stores the alert ahead of the alerts already
   * due, so that this invocation's first take gets it rather than the oldest of a backlog.
   */
  first?: boolean;
}

/** How an accepted alert is kept alive: the platform's budget, counted from the acceptance. */
export interface KeepAlive {
  /** The platform's budget for work kept alive after the answer (`keepAliveBudgetMs`), in ms. */
  readonly budgetMs: number;
  /** `Date.now()` when the alert was accepted. */
  readonly startedAt: number;
}
