import type { AlertRecord, QueueHealth } from '../../queue-port/alert-queue.js';
import { integerOption } from '../../options/integer-option.js';

/** How an alert is stored (`AlertStore.accept`). */
export interface StoreAcceptOptions {
  /** How long the identity is remembered, in ms: an alert with it is a duplicate until then. */
  dedupeTtlMs: number;
  /**
   * Store the alert ahead of every alert due now, so that the next take gets it: the receiver
   * runs it in the invocation that accepted it. Among alerts stored so, the newest goes first.
   */
  first?: boolean;
  /**
   * Set when the receiver runs alerts in order per user (`order: 'per-user'`): the alert's user
   * and time, which the store keeps with the alert (a take in order picks by them), and the
   * newest time accepted for that user, which the store keeps for `dedupeTtlMs` after each
   * acceptance (a taken alert's `newest`). A duplicate changes nothing.
   */
  order?: UserOrderKey;
}

/** Whom an alert is about and when, for the order per user (`order: 'per-user'`). */
export interface UserOrderKey {
  /** The alert's `userId`. */
  readonly user: string;
  /** The alert's `triggeredAt`, in milliseconds since the epoch. */
  readonly at: number;
}

export { supersededBy } from '../superseded.js';

/** The order key of an accepted alert: its `userId`, and its `triggeredAt` in ms. */
export function orderKeyOf(entry: AlertRecord<'accepted'>): UserOrderKey {
  return { user: entry.alert.userId, at: Date.parse(entry.alert.triggeredAt) };
}

/** How a taker asks for an alert: its lease token, and how long the lease lasts. */
export interface TakeOptions {
  /** The taker's lease token: every later write of the alert must carry it. */
  token: string;
  /** How long the lease lasts, in ms (on the store's clock where it has one). */
  leaseMs: number;
  /**
   * `false`: answer at once when nothing is due (a sweep asks so); by default a store that can be
   * woken may wait a short while for work first.
   */
  wait?: boolean;
  /**
   * Take in order per user (`order: 'per-user'`; the alerts were accepted with `order`). A user
   * is *held* from the take of one of its alerts until that alert completes or fails for good:
   * a retry waiting for its delay and an alert put back by `reclaimExpired` still hold it. Such a
   * take, in one atomic step with the hold:
   * - takes the alert that holds its user once it is due again (a retry, a takeover), and no other
   *   alert of a held user, whoever asks;
   * - of a user not held, takes only the alert with the oldest `at` among the user's waiting
   *   alerts (ties: the first accepted), and holds the user by it;
   * - answers, in the taken record's `newest`, the newest `at` accepted for the user within
   *   `dedupeTtlMs` (the taken alert's own at least).
   * `complete` and `fail` release the user; `retry(id)` and `retryAll()` of a failed alert put it
   * back as a waiting alert like any other (it holds nothing until taken).
   */
  perUser?: boolean;
}

/**
 * What core decided after a try of an alert, as a back end writes it: core computed every value,
 * and the back end computes none of its own. A pull store gets the `retry` member in
 * `scheduleRetry` and the `failed` member in `fail` (a completion is `complete`); a push queue's
 * `apply` gets any of the three (`PushQueue.runDelivered`).
 */
export type AlertVerdict =
  /** Every handler succeeded: the alert is done (a push queue acknowledges the message). */
  | { readonly outcome: 'completed' }
  /** The try failed and another follows. */
  | {
      readonly outcome: 'retry';
      /** The alert becomes due again this many ms from now. */
      readonly delayMs: number;
      /** Tries made, this one included: the back end writes the number, it never increments one. */
      readonly tries: number;
      /** Ids of the handlers that succeeded so far (this try's too): the next try skips them. */
      readonly succeeded: readonly string[];
      /** The try's error (a `HandlersFailedError`); its message is kept. */
      readonly error: Error;
    }
  /** The alert failed for good: it goes to the failed set, which `failed()` lists. */
  | {
      readonly outcome: 'failed';
      /** Tries made, this one included (an alert failed for its stalls: those before it). */
      readonly tries: number;
      /** Ids of the handlers that succeeded (skipped when the alert is retried). */
      readonly succeeded: readonly string[];
      /**
       * The last try's error (a `HandlersFailedError`, or an `AlertStalledError` for an alert
       * failed without a try); its message is kept (the failed record's `error`).
       */
      readonly error: Error;
    };

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
  return {
    limit: integerOption('limit', options.limit ?? 50, 1),
    offset: integerOption('offset', options.offset ?? 0, 0),
  };
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
 * The lease operations of a pull-based durable back end: what core's runner
 * (`createDurableQueue`) needs to accept alerts, hand each to one taker at a time, and store the
 * verdicts that core computed. Every write carries the taker's token and is refused (resolves
 * `false`, writes nothing) once another token holds the alert or the lease ran out.
 */
export interface AlertLeaseStore {
  /** A short name for messages and health output, e.g. `'redis'`. */
  readonly kind: string;
  /**
   * Records the identity (`entry.id`) for `dedupeTtlMs` and stores the alert as due now, in one
   * atomic step: `'duplicate'` (nothing stored) when the identity is already recorded. The
   * identity outlives the alert's job. Rejects when the store cannot record it, with the store's
   * own reason (a refused write says so; never a password).
   */
  accept(
    entry: AlertRecord<'accepted'>,
    options: StoreAcceptOptions,
  ): Promise<'accepted' | 'duplicate'>;
  /**
   * Hands one due alert to the taker of `token`, leased for `leaseMs`: no other take gets it while
   * the lease holds. `undefined` when nothing is due. A store that can be woken (BullMQ's marker,
   * Postgres' `LISTEN`) may wait a short while for work before it answers `undefined`; its
   * `stopTaking` ends that wait.
   */
  take(options: TakeOptions): Promise<AlertRecord<'taken'> | undefined>;
  /**
   * Extends the lease of `token` on the alert whose job is `jobId`; false once the lease was lost. With `stalls`, also
   * writes that count and clears `lapsed` (core's count after a takeover).
   */
  extend(jobId: string, token: string, leaseMs: number, stalls?: number): Promise<boolean>;
  /** The alert is done; false (nothing written) once the lease was lost. */
  complete(jobId: string, token: string): Promise<boolean>;
  /**
   * `complete`, then `take(next)`, in one round trip where the engine allows (BullMQ's
   * `fetchNext`, one SQL statement): how a busy consumer finishes an alert and starts the next.
   * The take happens whether or not the completion went through. Resolves with whether the
   * completion went through (`completed`: false, nothing written, once the lease was lost) and
   * the alert taken next, leased to `next.token` (undefined when nothing was due).
   */
  completeAndTake(
    jobId: string,
    token: string,
    next: TakeOptions,
  ): Promise<{ completed: boolean; next: AlertRecord<'taken'> | undefined }>;
  /**
   * The try failed and another follows: the alert becomes due again after `delayMs`, with core's
   * `tries` and `succeeded` written. False (nothing written) once the lease was lost.
   */
  scheduleRetry(
    jobId: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'retry' }>,
  ): Promise<boolean>;
  /**
   * The alert failed for good: it goes to the failed set with `error`'s message and core's `tries`
   * and `succeeded`. False (nothing written) once the lease was lost.
   */
  fail(
    jobId: string,
    token: string,
    verdict: Extract<AlertVerdict, { outcome: 'failed' }>,
  ): Promise<boolean>;
  /**
   * Puts back, due now, the alerts whose lease expired (their taker died or froze), each marked
   * `lapsed`; counts nothing. Resolves with how many. Does the whole job every time it is called
   * (core calls it every `reclaimIntervalMs`: a call the store skipped would add up to one more
   * interval to the takeover bound), and is safe to call from many processes at once.
   *
   * Optional: a store whose engine puts expired leases back on a timer of its own (BullMQ's
   * stalled checker, which `@churn-risk/redis` configures so that its bound holds) omits it, and
   * then states and tests its own takeover bound.
   */
  reclaimExpired?(): Promise<number>;
  /** Asks the store whether it answers and can write (never throws). */
  health(): Promise<QueueHealth>;
  /** Alerts waiting for any taker: waiting and delayed. */
  depth(): Promise<number>;
  /**
   * Milliseconds until the next delayed alert (a retry waiting for its delay) falls due, at least
   * 0; undefined when none is delayed. A sweep reports it, so that a cron can tell when to come
   * back.
   */
  nextDueInMs(): Promise<number | undefined>;
  /**
   * Ends a `take` that waits for work, and takes nothing more, while the writes of alerts already
   * taken still go through (core calls it from `close`, then waits for the running tries, then
   * calls `close`). Only a store whose `take` waits needs it.
   */
  stopTaking?(): Promise<void>;
  /** Releases what the store opened (never a connection the user passed in). */
  close(): Promise<void>;
}

/** The failed-set operations of a durable back end: what the tools (CLI, dashboards) need. */
export interface FailedAlertStore {
  /** Failed alerts, newest first. */
  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]>;
  /**
   * Puts a failed alert back, due now, with its tries and stalls set to 0, `lapsed` cleared and its
   * record of succeeded handlers kept, in one atomic step that happens only while the alert is
   * failed: a retry never resets an alert that another retry put back and a taker holds. `id` is
   * the alert identity (a failed record's `id`), or the store's job id (its `jobId`).
   * Rejects with a `TypeError` when there is no such failed alert (also when another retry put it
   * back first).
   */
  retry(id: string): Promise<void>;
  /**
   * Puts back every alert that is failed when it is called (a snapshot), once each, also when
   * some fail again at once, each in one atomic step as `retry` does; resolves with how many it
   * put back. It goes on past an alert that is no longer failed (put back by another call, even
   * one that failed again since: a new failure, not in the snapshot), and counts only those it put
   * back: calls at once, from any processes, put each failed alert back once between them.
   */
  retryAll(): Promise<number>;
  /** Exact counts by state, across every process that shares the store. */
  counts(): Promise<QueueCounts>;
}

/**
 * What a pull-based durable back end implements: storage, and nothing else. Core's
 * `createDurableQueue` runs the loops, the leases, the try protocol, the stall policy and
 * `onError`, and computes every transition (tries, stalls, the record, the due time); a store
 * keeps alerts, hands each to one taker at a time, and writes what core computed while the
 * taker's token holds the alert.
 *
 * `@churn-risk/redis` (BullMQ) and `@churn-risk/postgres` (PostgreSQL's own tables) implement it;
 * `createMemoryStore` is the reference implementation, and `storeContract` from
 * `@churn-risk/core/testing` is the test suite every store must pass.
 */
export interface AlertStore extends AlertLeaseStore, FailedAlertStore {}
