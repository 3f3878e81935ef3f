import type { ReceiverObserver } from '../observability/receiver-observer.js';
import { fromTraceCarrier } from '../observability/trace-carrier.js';
import type { AlertProcessor, HandlerFailure, QueuedAlert, TryOutcome } from './alert-queue.js';
import { handlerKeys } from './handler-keys.js';
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
  /** `handlerKeys(handlers)`, replaced together with `handlers`. */
  #keys: readonly string[] = [];
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

  add(handler: AnyHandler): void {
    this.#setHandlers([...this.handlers, handler]);
  }

  remove(handler: AnyHandler): void {
    const index = this.handlers.lastIndexOf(handler);
    if (index >= 0) this.#setHandlers(this.handlers.toSpliced(index, 1));
  }

  #setHandlers(handlers: readonly AnyHandler[]): void {
    this.handlers = handlers;
    this.#keys = handlerKeys(handlers);
  }

  addErrorHandler(handler: ErrorHandler): void {
    this.errorHandlers = [...this.errorHandlers, handler];
  }

  process(entry: QueuedAlert): number | Promise<number> {
    return runHandlers(this.#input(entry));
  }

  async runTry(
    entry: QueuedAlert,
    attempt: number,
    done: ReadonlySet<string>,
  ): Promise<TryOutcome> {
    const input = this.#input(entry);
    const keys = this.#keys; // the keys of input.handlers: both were read in this turn
    const skip = new Set<number>();
    keys.forEach((key, index) => {
      if (done.has(key)) skip.add(index);
    });
    const failures = await tryHandlers(input, attempt, skip);
    const failed = new Set(failures.map((failure) => failure.index));
    const succeeded = new Set(done);
    keys.forEach((key, index) => {
      if (!failed.has(index)) succeeded.add(key);
    });
    return { failures, succeeded: [...succeeded] };
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
