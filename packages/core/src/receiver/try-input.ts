import type { SpanContext } from '@opentelemetry/api';
import type { ReceiverObserver } from '../observability/receiver-observer.js';
import type { ReceiverTelemetry } from '../observability/telemetry.js';
import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { ErrorHandler } from './types.js';
import type { HandlerRegistration } from './handler-registration.js';
import type { RetryPolicy } from './retry-policy.js';
import type { AlertContext } from './types.js';

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
  counts: { failed: number };
  /** The receiver's logger and listeners. */
  observer: ReceiverObserver;
  /** OpenTelemetry, when `@opentelemetry/api` is installed. */
  telemetry: ReceiverTelemetry | undefined;
  /** The delivery's `receive` span, which each try's `process` span links to. */
  link: SpanContext | undefined;
}

/** The context handlers get for try `attempt` (0 for the first). */
export function contextOf(input: TryInput, attempt: number): AlertContext {
  return {
    id: input.id,
    receivedAt: new Date(input.receivedAt),
    attempt,
    event: 'churn_risk_alert',
  };
}
