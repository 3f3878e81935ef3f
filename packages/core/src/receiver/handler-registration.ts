import type { ChurnRiskAlert } from '../payload/alert-schema.js';
import type { AlertContext } from './types.js';

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

/** An example for the messages below. */
const EXAMPLE = "receiver.on('churn_risk_alert', handler, { id: 'crm-task' })";

/**
 * Checks a registration against the handlers already registered and returns it: the refusals of
 * SPEC 13 (an id that is not a non-empty string, a repeated id, a handler without an id next to
 * another one on a durable queue) are `TypeError`s.
 */
export function registration(
  existing: readonly HandlerRegistration[],
  handler: AnyHandler,
  options: HandlerOptions | undefined,
  durableQueue: string | undefined,
): HandlerRegistration {
  if (options !== undefined && (typeof options !== 'object' || (options as unknown) === null)) {
    throw new TypeError('The options of on() must be an object, such as { id: "crm-task" }.');
  }
  const id = options?.id;
  if (id !== undefined && (typeof id !== 'string' || id.trim() === '')) {
    throw new TypeError(`A handler id must be a non-empty string, as in ${EXAMPLE}.`);
  }
  if (id !== undefined && existing.some((entry) => entry.id === id)) {
    throw new TypeError(`A handler with the id "${id}" is already registered: ids must be unique.`);
  }
  if (durableQueue !== undefined && existing.length > 0) {
    const unnamed = id === undefined || existing.some((entry) => entry.id === undefined);
    if (unnamed) {
      throw new TypeError(
        `With a durable queue (${durableQueue}) and two or more handlers, every handler needs an ` +
          `id, the name under which the queue records that it succeeded for an alert: ${EXAMPLE}.`,
      );
    }
  }
  return { handler, id };
}
