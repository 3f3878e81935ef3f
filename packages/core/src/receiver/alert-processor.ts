import type { ReceiverObserver } from '../observability/receiver-observer.js';
import { fromTraceCarrier } from '../observability/trace-carrier.js';
import type { AlertProcessor, QueuedAlert, TakenAlert, TryVerdict } from './alert-queue.js';
import { giveUpAlert, runAlert, runTakenTry } from './alert-tries.js';
import {
  registration,
  type AnyHandler,
  type HandlerOptions,
  type HandlerRegistration,
} from './handler-registration.js';
import type { RetryPolicy } from './retry-policy.js';
import type { TryInput } from './try-input.js';
import type { ErrorHandler } from './types.js';

/**
 * The receiver's handlers and retry policy, as the queue sees them (`AlertProcessor`). The lists
 * are replaced, never mutated, when handlers are added or removed: an alert being processed keeps
 * the lists it started with, without a copy per alert.
 */
export class HandlerRegistry implements AlertProcessor {
  handlers: readonly HandlerRegistration[] = [];
  errorHandlers: readonly ErrorHandler[] = [];
  readonly concurrency: number;
  readonly retry: RetryPolicy;
  readonly #counts: { failed: number };
  readonly #observer: ReceiverObserver;
  /** The durable queue's kind (handler ids are then required next to another handler). */
  readonly #durableQueue: string | undefined;

  /**
   * `counts.failed` goes up by one for each handler that failed after its retries; `observer`
   * logs failures and traces each try. `durableQueue` names a queue that stores alerts outside
   * this process (`undefined` for an in-process queue).
   */
  constructor(
    concurrency: number,
    retry: RetryPolicy,
    counts: { failed: number },
    observer: ReceiverObserver,
    durableQueue: string | undefined,
  ) {
    this.concurrency = concurrency;
    this.retry = retry;
    this.#counts = counts;
    this.#observer = observer;
    this.#durableQueue = durableQueue;
  }

  /** Registers `handler`; a `TypeError` for the refusals of SPEC 13. */
  add(handler: AnyHandler, options: HandlerOptions | undefined): void {
    const entry = registration(this.handlers, handler, options, this.#durableQueue);
    this.handlers = [...this.handlers, entry];
  }

  /** Removes the last registration of `handler`. */
  remove(handler: AnyHandler): void {
    let index = this.handlers.length - 1;
    while (index >= 0 && this.handlers[index]?.handler !== handler) index--;
    if (index >= 0) this.handlers = this.handlers.toSpliced(index, 1);
  }

  addErrorHandler(handler: ErrorHandler): void {
    this.errorHandlers = [...this.errorHandlers, handler];
  }

  process(entry: QueuedAlert): number | Promise<number> {
    return runAlert(this.#input(entry));
  }

  runTry(taken: TakenAlert): Promise<TryVerdict> {
    return runTakenTry(this.#input(taken.entry), taken);
  }

  giveUp(entry: QueuedAlert, attempt: number, error: Error): Promise<void> {
    return giveUpAlert(this.#input(entry), attempt, error);
  }

  #input(entry: QueuedAlert): TryInput {
    const { telemetry } = this.#observer;
    return {
      alert: entry.alert,
      id: entry.id,
      receivedAt: entry.receivedAt,
      handlers: this.handlers,
      errorHandlers: this.errorHandlers,
      retry: this.retry,
      counts: this.#counts,
      observer: this.#observer,
      telemetry,
      link:
        telemetry === undefined || entry.traceContext === undefined
          ? undefined
          : fromTraceCarrier(entry.traceContext),
    };
  }
}
