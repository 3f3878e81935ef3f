import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { QueueHealth, QueuedAlert } from '../receiver/alert-queue.js';

/** An alert a store handed to one taker (`AlertStore.take`), under that taker's lease. */
export interface StoredAlert {
  /** The store's id of the alert's job: what `extend`, `complete`, `retry(id)` and the rest take. */
  readonly id: string;
  /** The alert as it was accepted. */
  readonly entry: QueuedAlert;
  /** Tries made so far (0 before the first); the handlers see it as `context.attempt`. */
  readonly tries: number;
  /** Ids of the handlers that succeeded for the alert in earlier tries: the next try skips them. */
  readonly succeeded: readonly string[];
  /**
   * How often a taker of this alert died (its lease expired and `reclaimExpired` put it back).
   * Above `maxStalls`, core fails the alert at this take instead of running it (a poison alert).
   */
  readonly stalls: number;
}

/** An alert that failed after its last try, as `failed()` lists it. */
export interface FailedAlert {
  /** The store's id of the alert's job: what `retry(id)` takes. */
  id: string;
  /** The alert identity `userId:triggeredAt`. */
  alertId: string;
  alert: ChurnRiskAlert;
  /**
   * The last try's error message: it names the handlers that failed by id (`Handler crm failed:
   * ...`), or says that the alert stalled (its worker died mid-alert more than `maxStalls` times).
   */
  error: string;
  /** Ids of the handlers that had succeeded for it (they are skipped when it is retried). */
  succeededHandlers: string[];
  /** Tries made. */
  tries: number;
  /** When the receiver accepted it. */
  receivedAt: Date;
  /** When the last try failed. */
  failedAt: Date | undefined;
}

/** Options of `failed()`. */
export interface FailedListOptions {
  /** At most this many, newest first. Default 50. */
  limit?: number;
  /** Skip this many. Default 0. */
  offset?: number;
}

/**
 * `FailedListOptions` with the defaults (50, 0) filled in; a `TypeError` for a limit below 1 or a
 * negative offset. For store authors, so that every store refuses the same way.
 */
export function resolveFailedListOptions(options: FailedListOptions = {}): {
  limit: number;
  offset: number;
} {
  const limit = options.limit ?? 50;
  const offset = options.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be at least 1.');
  if (!Number.isInteger(offset) || offset < 0) throw new TypeError('offset must be at least 0.');
  return { limit, offset };
}

/** Alerts by state, across every process that shares the store. */
export interface QueueCounts {
  /** Due, and not taken. */
  waiting: number;
  /** Taken, under a lease. */
  active: number;
  /** Waiting for a retry's delay. */
  delayed: number;
  /** Failed after the last try (kept for `retry`). */
  failed: number;
  /** Done (kept while the identity is remembered, where the store keeps them at all). */
  completed: number;
}

/**
 * What a pull-based durable back end implements (SPEC 17): storage, and nothing else. Core's
 * `createDurableQueue` runs the loops, the leases, the try protocol, the stall policy and
 * `onError`; a store keeps alerts, hands each to one taker at a time, and refuses every write of
 * a taker whose lease was lost (the write's `token` is not the one that holds the alert).
 *
 * `@churn-risk/redis` (BullMQ) and `@churn-risk/postgres` (pg-boss) implement it;
 * `createMemoryStore` is the reference implementation, and `storeContract` from
 * `@churn-risk/core/testing` is the test suite every store must pass.
 */
export interface AlertStore {
  /** A short name for messages and health output, e.g. `'redis'`. */
  readonly kind: string;
  /**
   * Records the identity (`entry.id`) for `dedupeTtlMs` and stores the alert as due now, in one
   * atomic step: `'duplicate'` (nothing stored) when the identity is already recorded. The
   * identity outlives the alert's job. Rejects when the store cannot record it.
   */
  accept(entry: QueuedAlert, options: { dedupeTtlMs: number }): Promise<'accepted' | 'duplicate'>;
  /**
   * Hands one due alert to the taker of `token`, leased for `leaseMs`: no other take gets it while
   * the lease holds. `undefined` when nothing is due. A store that can be woken (BullMQ's
   * marker) may wait a short while for work before it answers `undefined`.
   */
  take(options: { token: string; leaseMs: number }): Promise<StoredAlert | undefined>;
  /** Extends the lease of `token` on alert `id`; false once the lease was lost. */
  extend(id: string, token: string, leaseMs: number): Promise<boolean>;
  /** The alert is done; false (nothing written) once the lease was lost. */
  complete(id: string, token: string): Promise<boolean>;
  /**
   * The try failed and another follows: the alert becomes due again after `delayMs`, with one
   * more try counted and `succeeded` as its record. False (nothing written) once the lease was lost.
   */
  scheduleRetry(
    id: string,
    token: string,
    verdict: { delayMs: number; succeeded: readonly string[]; error: Error },
  ): Promise<boolean>;
  /**
   * The alert failed for good: it goes to the failed set with `error`'s message, one more try
   * counted, and `succeeded` as its record. False (nothing written) once the lease was lost.
   */
  fail(
    id: string,
    token: string,
    verdict: { error: Error; succeeded: readonly string[] },
  ): Promise<boolean>;
  /**
   * Puts back the alerts whose lease expired (their taker died), counting a stall for each;
   * resolves with how many. `maxStalls` is the limit core applies at the next take (a store may
   * use it to mark the alerts over it, as BullMQ does).
   */
  reclaimExpired(options: { maxStalls: number }): Promise<number>;
  /** Failed alerts, newest first. */
  failed(options?: FailedListOptions): Promise<FailedAlert[]>;
  /**
   * Puts a failed alert back, due now, with its tries and stalls counted afresh and its record of
   * succeeded handlers kept. `id` is the job id `failed()` lists, or the alert identity. Rejects
   * with a `TypeError` when there is no such failed alert.
   */
  retry(id: string): Promise<void>;
  /**
   * Puts back every alert that is failed when it is called (a snapshot), once each, also when
   * some fail again at once; resolves with how many.
   */
  retryAll(): Promise<number>;
  /** Exact counts by state, across every process that shares the store. */
  counts(): Promise<QueueCounts>;
  /** Asks the store whether it answers (never throws). */
  health(): Promise<QueueHealth>;
  /** Alerts waiting for any taker: waiting and delayed. */
  depth(): Promise<number>;
  /**
   * Ends a `take` that waits for work, and takes nothing more, while the writes of alerts already
   * taken still go through (core calls it from `close`, then waits for the running tries, then
   * calls `close`). Only a store whose `take` waits needs it.
   */
  stopTaking?(): Promise<void>;
  /** Releases what the store opened (never a connection the user passed in). */
  close(): Promise<void>;
}
