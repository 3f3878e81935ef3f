import type { ChurnRiskAlert } from '../payload/alert-schema.js';

/**
 * An accepted alert on its way through a queue. Plain JSON, so that a durable queue can store it
 * as it is and hand it to a worker in another process.
 */
export interface QueuedAlert {
  /** The alert identity `userId:triggeredAt`, the de-duplication key. */
  id: string;
  /** The validated alert, unknown extra fields included. */
  alert: ChurnRiskAlert;
  /** When the receiver accepted the delivery, in milliseconds since the epoch. */
  receivedAt: number;
  /**
   * Trace context of the delivery (W3C `traceparent` and `tracestate`), set by the receiver's
   * instrumentation so that the processing, wherever it runs, links to the delivery's span.
   */
  traceContext?: Record<string, string>;
}

/** A handler that failed one try, by its registration index. */
export interface HandlerFailure {
  /** Index of the handler in registration order. */
  index: number;
  /** What it threw or rejected with. */
  error: unknown;
}

/** An alert the queue has taken: `done` settles when this process has finished its part. */
export interface AcceptedAlert {
  /**
   * Settles (never rejects) when this process is done with the alert: after its handlers, their
   * retries and `onError` for a queue that processes in this process; at once for a durable
   * queue, whose workers process it later.
   */
  readonly done: Promise<void>;
  /** After `done`: handlers that failed after their retries (in-process queues only). */
  readonly failures?: number;
}

/**
 * What the queue answers for an alert: taken (`AcceptedAlert`), already seen (`'duplicate'`), or
 * refused for lack of room (`'full'`, answered `503 OVERLOADED`). A queue that cannot record the
 * alert (its store is down or slow) throws or rejects, which is also answered `503 OVERLOADED`.
 */
export type AcceptResult = AcceptedAlert | 'duplicate' | 'full';

/**
 * The receiver's side of processing, handed to the queue by `attach`. A queue that runs alerts in
 * its own process calls `process`; a durable queue that schedules retries itself (delayed jobs)
 * calls `runTry` for each try and `reportFailures` after the last one.
 */
export interface AlertProcessor {
  /** Alerts (or jobs) one process runs at once: the receiver's `concurrency` option. */
  readonly concurrency: number;
  /** Further tries after a failed one, and the delay before retry `n` (1-based), in ms. */
  readonly retry: {
    /** Further tries after the first failure. */
    readonly retries: number;
    /** Milliseconds to wait before retry number `retry` (1 for the first retry). */
    delayMs(retry: number): number;
  };
  /**
   * Runs every handler of the alert with the retry policy, in this process (retries wait on
   * timers), and reports what still fails to `onError`. Never throws or rejects; gives the number
   * of handlers that failed, synchronously when every handler returned synchronously.
   */
  process(entry: QueuedAlert): number | Promise<number>;
  /**
   * One try (`attempt` 0 for the first) of the handlers whose key is not in `done`, side by side.
   * `done` is what the previous try gave as `succeeded` (empty for the first): store it with the
   * alert. Keys name the same handler in every process and survive a deploy that adds, removes or
   * reorders handlers; a handler whose code changed runs again. Never rejects.
   */
  runTry(entry: QueuedAlert, attempt: number, done: ReadonlySet<string>): Promise<TryOutcome>;
  /** After the last try: each failure goes to the `onError` handlers once. Never rejects. */
  reportFailures(
    entry: QueuedAlert,
    attempt: number,
    failures: readonly HandlerFailure[],
  ): Promise<void>;
}

/** What one try of an alert's handlers gave (`AlertProcessor.runTry`). */
export interface TryOutcome {
  /** The handlers that failed this try, by registration index. */
  readonly failures: readonly HandlerFailure[];
  /**
   * Keys of the handlers that have succeeded for this alert, in this try or an earlier one: pass
   * them as `done` to the next try.
   */
  readonly succeeded: readonly string[];
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
 * of `createReceiver`). The receiver decides (verification, the answers, the retry policy, the
 * handlers); a queue stores and schedules. The default, `createMemoryQueue`, keeps alerts in the
 * process; `@churn-risk/redis` keeps them in Redis through BullMQ. A Postgres or SQS queue would
 * implement the same interface.
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
  /** Gives the queue the receiver's processing. Called once, before anything else. */
  attach(processor: AlertProcessor): void;
  /**
   * Records the identity and stores the alert, atomically: after a failure, neither is kept.
   * Synchronous when the store is.
   */
  accept(entry: QueuedAlert): AcceptResult | Promise<AcceptResult>;
  /** Forgets an identity, so that the service's redelivery is processed again. */
  release(id: string): void | Promise<void>;
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
}
