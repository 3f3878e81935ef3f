import type {
  AnyHandler,
  ErrorHandler,
  HandlerOptions,
  HandlerRegistration,
} from '../queue-port/handler-types.js';

// The handler registry, the try protocol's first part: the receiver's handlers and `onError`
// handlers, checked as they are registered. The try runner (try-protocol.ts) reads the
// lists when an alert is taken.

/** An example for the messages below. */
const EXAMPLE = "receiver.on('churn_risk_alert', handler, { id: 'crm-task' })";

/**
 * Checks a registration against the handlers already registered and returns it: the refusals
 * (an id that is not a non-empty string, a repeated id, a handler without an id next to
 * another one on a durable queue) are `TypeError`s.
 */
function registration(
  existing: readonly HandlerRegistration[],
  handler: AnyHandler,
  options: HandlerOptions | undefined,
  durableQueue: string | undefined,
  order: 'none' | 'per-user',
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
  const superseded: unknown = options?.superseded;
  const skip = superseded === 'skip';
  if (skip ? order !== 'per-user' : superseded !== undefined && superseded !== 'run') {
    throw new TypeError(
      "superseded must be 'run', or 'skip' with createReceiver({ order: 'per-user' }).",
    );
  }
  return skip ? { handler, id, skipSuperseded: true } : { handler, id };
}

/**
 * The receiver's handlers and `onError` handlers. The lists are replaced, never mutated, when
 * handlers are added or removed: an alert being processed keeps the lists it started with,
 * without a copy per alert.
 */
export class HandlerRegistry {
  handlers: readonly HandlerRegistration[] = [];
  errorHandlers: readonly ErrorHandler[] = [];
  /** The durable queue's kind (handler ids are then required next to another handler). */
  readonly #durableQueue: string | undefined;
  readonly #order: 'none' | 'per-user';

  /**
   * `durableQueue` names a queue that stores alerts outside this process (`undefined` for an
   * in-process queue); `order` is the receiver's (`superseded: 'skip'` needs `'per-user'`).
   */
  constructor(durableQueue: string | undefined, order: 'none' | 'per-user' = 'none') {
    this.#durableQueue = durableQueue;
    this.#order = order;
  }

  /** Registers `handler`; a `TypeError` for the refusals of `registration`. */
  add(handler: AnyHandler, options: HandlerOptions | undefined): void {
    const entry = registration(this.handlers, handler, options, this.#durableQueue, this.#order);
    this.handlers = [...this.handlers, entry];
  }

  /** Removes the last registration of `handler`. */
  remove(handler: AnyHandler): void {
    let index = this.handlers.length - 1;
    while (index >= 0 && this.handlers[index]?.handler !== handler) index--;
    if (index >= 0) this.handlers = this.handlers.toSpliced(index, 1);
  }

  /** Registers an `onError` handler. */
  addErrorHandler(handler: ErrorHandler): void {
    this.errorHandlers = [...this.errorHandlers, handler];
  }
}
