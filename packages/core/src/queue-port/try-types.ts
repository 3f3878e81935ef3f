import type { FailedHandler } from '../errors/handlers-failed-error.js';
import type { ReceiverObserver } from '../observability/receiver-observer.js';
import type { TracerSpanContext as SpanContext } from '../observability/receiver-tracer.js';
import type { ReceiverTelemetry } from '../observability/telemetry.js';
import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { AlertRecord, ErrorHandler, HandlerRegistration } from './handler-types.js';

// The types of the try protocol, shared by its three parts: the handler registry
// (handler-registry.ts), the try runner (try-protocol.ts) and failure reporting
// (failure-report.ts).

/** What the tries of one alert need: the queued alert, plus the receiver's handlers and policy. */
export interface TryInput {
  alert: ChurnRiskAlert;
  id: string;
  /** Milliseconds since the epoch (a `Date` is made per try, as handlers may keep it). */
  receivedAt: number;
  /** The handlers when the alert was taken (later `on`/`off` calls do not change them). */
  handlers: readonly HandlerRegistration[];
  errorHandlers: readonly ErrorHandler[];
  retry: RetryPolicy;
  /** Counts handlers that failed after their retries (the receiver's `stats.failed`). */
  counts: { failed: number; superseded: number };
  /** The receiver's logger and listeners. */
  observer: ReceiverObserver;
  /** OpenTelemetry, when `@opentelemetry/api` is installed. */
  telemetry: ReceiverTelemetry | undefined;
  /** The delivery's `receive` span, which each try's `process` span links to. */
  link: SpanContext | undefined;
}

/** A checked retry policy (the `retries` option). */
export interface RetryPolicy {
  /** Further tries after the first failure. */
  retries: number;
  /** Delay after the failed try `attempt` (0-based), in milliseconds; never negative or NaN. */
  delayMs: (attempt: number) => number;
  /** `retries.shouldRetry`, or `defaultShouldRetry`: whether a failed try is tried again. */
  shouldRetry: (error: unknown, attempt: number) => boolean;
}

/**
 * What one try decided, as the try runner gives it: a durable queue writes the `AlertVerdict` made
 * of it, with the tries counted. `succeeded` is the record of the handlers that have succeeded
 * for the alert so far (their ids; a handler without an id, possible only where it is the alert's
 * one handler on a durable queue, by a key of its position, `recordKey`): the next try skips
 * exactly these. `failures` are the handlers that failed this try.
 */
export type TryVerdict =
  | { readonly outcome: 'completed' }
  | {
      readonly outcome: 'retry' | 'failed';
      /** A `HandlersFailedError`, or an `AlertStalledError` for an alert failed without a try. */
      readonly error: Error;
      readonly succeeded: readonly string[];
      readonly failures: readonly FailedHandler[];
      /** `retry` only: milliseconds before the next try. */
      readonly delayMs: number;
    };

/** What a durable queue's try adds to the handlers' context: its lease's signal, the stalls. */
export interface TryLease {
  readonly signal: AbortSignal;
  readonly stalls: number;
  /**
   * In order per user: the newest `triggeredAt` accepted for the alert's user when it is later
   * than the alert's own (the alert is superseded), else undefined.
   */
  readonly supersededBy?: string | undefined;
}

/** What a try of a durable queue reads from the alert's record: tries, the record, the stalls. */
export type StoredTry = Pick<AlertRecord<'taken'>, 'tries' | 'succeeded' | 'stalls'>;
