import type { ReceiverObserver } from '../observability/receiver-observer.js';
import { fromTraceCarrier } from '../observability/trace-carrier.js';
import type { AlertProcessor, HandlerFailure, QueuedAlert } from './alert-queue.js';
import type { RetryPolicy } from './retry-policy.js';
import {
  reportFailures,
  runHandlers,
  tryHandlers,
  type AnyHandler,
  type RunHandlersInput,
} from './run-handlers.js';
import type { ErrorHandler } from './types.js';

/**
 * The receiver's handlers and retry policy, as the queue sees them (`AlertProcessor`). The lists
 * are replaced, never mutated, when handlers are added or removed: an alert being processed keeps
 * the lists it started with, without a copy per alert.
 */
export class HandlerRegistry implements AlertProcessor {
  handlers: readonly AnyHandler[] = [];
  errorHandlers: readonly ErrorHandler[] = [];
  readonly concurrency: number;
  readonly retry: RetryPolicy;
  readonly #counts: { failed: number };
  readonly #observer: ReceiverObserver;

  /**
   * `counts.failed` goes up by one for each handler that failed after its retries; `observer`
   * logs failures and traces each try.
   */
  constructor(
    concurrency: number,
    retry: RetryPolicy,
    counts: { failed: number },
    observer: ReceiverObserver,
  ) {
    this.concurrency = concurrency;
    this.retry = retry;
    this.#counts = counts;
    this.#observer = observer;
  }

  get handlerCount(): number {
    return this.handlers.length;
  }

  add(handler: AnyHandler): void {
    this.handlers = [...this.handlers, handler];
  }

  remove(handler: AnyHandler): void {
    const index = this.handlers.lastIndexOf(handler);
    if (index >= 0) this.handlers = this.handlers.toSpliced(index, 1);
  }

  addErrorHandler(handler: ErrorHandler): void {
    this.errorHandlers = [...this.errorHandlers, handler];
  }

  process(entry: QueuedAlert): number | Promise<number> {
    return runHandlers(this.#input(entry));
  }

  runTry(
    entry: QueuedAlert,
    attempt: number,
    skip: ReadonlySet<number>,
  ): Promise<readonly HandlerFailure[]> {
    return tryHandlers(this.#input(entry), attempt, skip);
  }

  reportFailures(
    entry: QueuedAlert,
    attempt: number,
    failures: readonly HandlerFailure[],
  ): Promise<void> {
    return reportFailures(this.#input(entry), attempt, failures);
  }

  #input(entry: QueuedAlert): RunHandlersInput {
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
