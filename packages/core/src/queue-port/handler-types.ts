import type { ChurnRiskAlert } from '../payload/alert-schema.js';

/** What a handler gets besides the alert. */
export interface AlertContext {
  /** The alert identity `userId:triggeredAt`. */
  id: string;
  /** When the receiver accepted the delivery. */
  receivedAt: Date;
  /** 0 for the first try of this handler, 1 for its first retry, and so on. */
  attempt: number;
  /** The event name. */
  event: 'churn_risk_alert';
  /**
   * Aborts as soon as this try's lease on a durable queue is found lost: a renewal was refused, or
   * the renewal timer fired after the lease's end (the process was frozen or stalled), so another
   * process may run the alert meanwhile. Check it before a side effect that must not happen twice,
   * or pass it to `fetch`. It never aborts with the in-memory queue. An accessor, made when first
   * read: read it from the context (`context.signal`); a copy made by spreading the context
   * (`{ ...context }`) does not carry it.
   */
  signal: AbortSignal;
  /**
   * How often a process that ran this alert died (or froze past its lease) mid-try before this
   * one: above 0, an earlier run may have done part of the work. Always 0 with the in-memory queue.
   */
  stalls: number;
  /** The id of the handler this context was given to (`on(..., { id })`); undefined without one. */
  handlerId: string | undefined;
  /**
   * A key for a side effect that must happen once: the alert identity and the handler's id
   * (`<id>/<handlerId>`, or the alert identity alone for a handler without an id; each part
   * percent-encoded as by `encodeURIComponent`, so that it is a valid header value). The same in
   * every try and every process that runs this handler for this alert, and different for each
   * handler: pass it as the idempotency key of an outbound call (the client's
   * `{ idempotencyKey }`, Stripe's `Idempotency-Key`) so that a run after a takeover or a retry
   * does not do the side effect twice.
   */
  idempotencyKey: string;
  /**
   * In order per user (`createReceiver({ order: 'per-user' })`): set when the alert is
   * superseded, that is when, as this try started, an alert of the same user with a later
   * `triggeredAt` had been accepted (by any process sharing the queue's store, within
   * `dedupeTtlMs`). It is that newest `triggeredAt`, as an ISO 8601 string. Undefined otherwise,
   * and always without `order: 'per-user'`. A handler that writes the user's current state (a CRM
   * field) should not write an older state over it: register it with `superseded: 'skip'`.
   */
  supersededBy: string | undefined;
}

/** A handler as the dispatcher sees it (the event map is erased here). */
export type AnyHandler = (payload: ChurnRiskAlert, context: AlertContext) => unknown;

/** Options of `receiver.on`. */
export interface HandlerOptions {
  /**
   * The handler's name, unique among the receiver's handlers: it names the handler in logs, spans
   * (`churn_risk.handler.id`) and failed alerts, and, with a durable queue, is its identity in the
   * record of the handlers that succeeded for an alert, across processes and deploys. Required
   * for every handler once a durable queue has two or more.
   */
  id?: string;
  /**
   * What to do with a superseded alert (`context.supersededBy`): `'run'` (the default) runs the
   * handler all the same, for handlers that must see every alert (an audit log, a notification);
   * `'skip'` does not run it and counts it as succeeded for the alert (a retry does not run it
   * either), for handlers that write the user's current state (a CRM field, a flag), so that an
   * older alert never overwrites a newer one. `'skip'` needs `createReceiver({ order: 'per-user' })`
   * (a `TypeError` otherwise).
   */
  superseded?: 'run' | 'skip';
}

/** A registered handler, its id, and whether it runs for a superseded alert. */
export interface HandlerRegistration {
  readonly handler: AnyHandler;
  readonly id: string | undefined;
  /** True for `superseded: 'skip'`: not run for a superseded alert. */
  readonly skipSuperseded?: boolean;
}

/** A handler of event `K`. Its result is awaited; a throw or rejection counts as a failure. */
export type EventHandler<E, K extends keyof E> = (payload: E[K], context: AlertContext) => unknown;

/** Called once a handler has used up its retries. */
export type ErrorHandler = (
  error: unknown,
  alert: ChurnRiskAlert,
  context: AlertContext,
) => unknown;

/**
 * An alert on its way, at one stage: the one record type of accept, take, retry and the failed
 * set. Plain JSON, so that a back end can keep it as it is and hand it to a process elsewhere.
 * Every stage has the accepted alert (`id`, `alert`, `receivedAt`, `traceContext`); the others
 * add what core wrote after a try:
 * - `'accepted'`: what the receiver accepted, as `AlertStore.accept` and a push queue's `send`
 *   get it.
 * - `'taken'`: what a pull store's `take` (and `completeAndTake`'s `next`) resolves with, under the
 *   taker's lease: the store's `jobId`, `tries`, `succeeded`, `stalls` and `lapsed`.
 * - `'delivered'`: a message a push-based platform queue delivered, given to
 *   `PushQueue.runDelivered`: `tries`, `succeeded`, and `stalls` where the platform counts
 *   redeliveries.
 * - `'failed'`: an alert that failed after its last try, as `failed()` lists it: `jobId`,
 *   `tries`, `succeeded`, `error` and `failedAt`.
 */
export type AlertRecord<Stage extends 'accepted' | 'taken' | 'delivered' | 'failed'> = {
  /**
   * The alert identity `userId:triggeredAt`: the de-duplication key, the handlers' `context.id`,
   * and what `retry(id)` takes.
   */
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
} & (Stage extends 'accepted'
  ? unknown
  : {
      /**
       * Tries made so far. Taken or delivered: 0 before the first; the `tries` of the last `retry`
       * verdict (a pull store's `scheduleRetry`; a push queue's new message), reset to 0 by
       * `retry(id)`; the try about to run is number `tries`, which the handlers see as
       * `context.attempt`. Failed: the tries made, the last one included.
       */
      readonly tries: number;
      /**
       * Ids of the handlers that succeeded for the alert in earlier tries (the last verdict's
       * `succeeded`): the next try, and a `retry(id)` of a failed alert, skip them.
       */
      readonly succeeded: readonly string[];
    }) &
  (Stage extends 'taken'
    ? {
        /**
         * The store's id of the alert's job, what `extend`, `complete`, `scheduleRetry` and `fail`
         * take (it may differ from the alert identity `id`).
         */
        readonly jobId: string;
        /**
         * How often the alert stalled before this try: how often a taker died or froze without
         * writing a verdict, as core last wrote it (`extend(jobId, token, leaseMs, stalls)`;
         * `retry(id)` sets 0). Above `maxStalls`, core fails the alert without a try (a poison
         * alert).
         */
        readonly stalls: number;
        /**
         * The previous taker of this alert lost its lease without writing a verdict (it died or
         * froze) and `reclaimExpired` put the alert back, so this take is a takeover. Core counts
         * the stall (`stalls + 1`), writes the count with `extend(jobId, token, leaseMs, stalls)`
         * and fails the alert when it is above `maxStalls`. The store keeps the flag until one of
         * core's writes clears it (that stall record, or any verdict); `retry(id)` clears it.
         */
        readonly lapsed: boolean;
        /**
         * A take in order per user (`TakeOptions.perUser`) only: the newest `triggeredAt`
         * accepted for the alert's user (ms since the epoch), which core compares with the
         * alert's own to tell whether it is superseded (`context.supersededBy`).
         */
        readonly newest?: number;
      }
    : Stage extends 'delivered'
      ? {
          /**
           * How often the platform redelivered the message without a verdict (a message without
           * it counts 0). Above `maxStalls`, core fails the alert without a try.
           */
          readonly stalls?: number;
        }
      : Stage extends 'failed'
        ? {
            /** The store's id of the alert's job (`retry` also takes it). */
            readonly jobId: string;
            /**
             * The last try's error message: it names the handlers that failed by id (`Handler crm
             * failed: ...`), or says that the alert stalled (its worker died mid-alert more than
             * `maxStalls` times).
             */
            readonly error: string;
            /**
             * When the last try failed, in milliseconds since the epoch (undefined where the store
             * does not know).
             */
            readonly failedAt: number | undefined;
          }
        : unknown);
