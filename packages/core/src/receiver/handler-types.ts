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
}

/** A handler as the dispatcher sees it (the event map is erased here). */
export type AnyHandler = (payload: ChurnRiskAlert, context: AlertContext) => unknown;

/** Options of `receiver.on` (SPEC 13). */
export interface HandlerOptions {
  /**
   * The handler's name, unique among the receiver's handlers: it names the handler in logs, spans
   * (`churn_risk.handler.id`) and failed alerts, and, with a durable queue, is its identity in the
   * record of the handlers that succeeded for an alert, across processes and deploys. Required
   * for every handler once a durable queue has two or more.
   */
  id?: string;
}

/** A registered handler and its id. */
export interface HandlerRegistration {
  readonly handler: AnyHandler;
  readonly id: string | undefined;
}

/** A handler of event `K`. Its result is awaited; a throw or rejection counts as a failure. */
export type EventHandler<E, K extends keyof E> = (payload: E[K], context: AlertContext) => unknown;

/** Called once a handler has used up its retries. */
export type ErrorHandler = (
  error: unknown,
  alert: ChurnRiskAlert,
  context: AlertContext,
) => unknown;
