import { isIntegrationError, type IntegrationErrorCode } from '../errors/integration-error.js';
import { deliveryRefusal } from '../errors/delivery-refusal.js';
import type { WebhookErrorCode } from '../errors/webhook-error-status.js';
import { createDefaultRefusalLog, type DefaultRefusalLog } from './default-refusal-log.js';
import { DEFAULT_RECEIVER_LOGGER, resolveLogger, type Logger } from './logger.js';
import { createReceiverTelemetry, type ReceiverTelemetry } from './telemetry.js';
import type { QueueDepth } from './receiver-metrics.js';
import { checkTracer } from './receiver-tracer.js';

/** A refused delivery, as `onRejected` listeners get it. */
export interface RejectedDelivery {
  /** The HTTP status answered: 4xx or 5xx. */
  status: number;
  /**
   * The answer's `error.code`; `INTERNAL_ERROR` for an unexpected failure or a `waitUntil` that
   * threw, `RAW_BODY_MISSING` for a body read before the receiver.
   */
  code: WebhookErrorCode | IntegrationErrorCode;
  /** The answer's message: it never holds a secret, a signature or the body. */
  message: string;
  /** When the receiver refused it. */
  receivedAt: Date;
}

/**
 * Called for each refused delivery, for security monitoring (a burst of `INVALID_SIGNATURE` is a
 * forged sender or a wrong secret). What it throws or rejects with never changes the answer.
 */
export type RejectedListener = (rejection: RejectedDelivery) => unknown;

const INTERNAL_MESSAGE = 'The webhook could not be processed.';

/**
 * What a receiver tells the outside about its deliveries: log records, `onRejected` listeners and
 * OpenTelemetry. Each method costs nothing beyond a few comparisons when no logger, listener or
 * SDK is configured.
 */
export class ReceiverObserver {
  readonly logger: Logger;
  /** `undefined` when `@opentelemetry/api` is not installed and no `tracer` is handed in. */
  readonly telemetry: ReceiverTelemetry | undefined;
  /** False with the default logger: debug records are not even built then. */
  readonly verbose: boolean;
  readonly #now: () => number;
  /** With the default logger only: each 5xx, and a 401, 413 and 400 summary a minute. */
  readonly #defaultLog: DefaultRefusalLog | undefined;
  #listeners: readonly RejectedListener[] = [];

  /**
   * @param logger the `logger` option (checked here: a `TypeError` for a bad one)
   * @param depth the number of alerts waiting, for the queue-depth gauge
   * @param tracer the `tracer` option (checked here: a `TypeError` for a bad one)
   */
  constructor(options: {
    logger: unknown;
    now: () => number;
    depth: QueueDepth;
    tracer?: unknown;
  }) {
    this.logger = resolveLogger(options.logger, DEFAULT_RECEIVER_LOGGER);
    this.verbose = this.logger !== DEFAULT_RECEIVER_LOGGER;
    this.#defaultLog = this.verbose ? undefined : createDefaultRefusalLog(this.logger, options.now);
    this.#now = options.now;
    this.telemetry = createReceiverTelemetry(options.depth, checkTracer(options.tracer));
  }

  /** Writes the default log's pending refusal summaries (at `close()`). */
  flushSummaries(): void {
    this.#defaultLog?.flush();
  }

  /** Registers an `onRejected` listener. */
  addRejectedListener(listener: RejectedListener): void {
    if (typeof listener !== 'function') throw new TypeError('A listener must be a function.');
    this.#listeners = [...this.#listeners, listener];
  }

  /**
   * A delivery refused with `error` (what the receiver turns into its answer): logged at `warn`
   * (an unexpected failure, answered 500 `INTERNAL_ERROR`, at `error`), then the listeners.
   */
  refused(error: unknown): RejectedDelivery {
    let rejection: RejectedDelivery;
    const refusal = deliveryRefusal(error);
    if (refusal !== undefined) {
      const { status, code, message } = refusal;
      rejection = { status, code, message, receivedAt: new Date(this.#now()) };
      // A 503 because the queue's store refused the write or did not answer names the store's own
      // error in the log (never in the answer): a store that refuses writes is not "overloaded".
      const storeError = status === 503 ? causeOf(error) : undefined;
      if (storeError === undefined) {
        this.logger.warn({ status, code }, `churn-risk delivery refused: ${message}`);
      } else {
        this.logger.warn(
          { status, code, err: storeError },
          `churn-risk delivery refused: ${message} The queue store failed: ${storeError.message}`,
        );
      }
      this.#defaultLog?.refused(status, code, message, storeError?.message);
    } else if (isIntegrationError(error)) {
      // The receiver is mounted the wrong way: every delivery fails until the code changes.
      const { status, code, message } = error;
      rejection = { status, code, message, receivedAt: new Date(this.#now()) };
      this.logger.error(
        { status, code, err: error.cause },
        `churn-risk delivery refused: ${message}`,
      );
    } else {
      rejection = {
        status: 500,
        code: 'INTERNAL_ERROR',
        message: INTERNAL_MESSAGE,
        receivedAt: new Date(this.#now()),
      };
      this.logger.error({ status: 500, code: 'INTERNAL_ERROR', err: error }, INTERNAL_MESSAGE);
    }
    for (const listener of this.#listeners) notify(listener, rejection, this.logger);
    return rejection;
  }

  /** An alert accepted for processing: `debug` with its identity. */
  accepted(id: string): void {
    if (this.verbose) this.logger.debug({ id }, 'churn-risk alert accepted');
  }

  /** A redelivery of an alert already accepted: `debug`. */
  duplicate(id: string): void {
    if (this.verbose) this.logger.debug({ id }, 'churn-risk duplicate delivery acknowledged');
  }

  /** A verified event this version has no schema for: `debug`. */
  ignored(event: string): void {
    if (this.verbose)
      this.logger.debug({ event }, 'churn-risk event ignored (unknown to this version)');
  }

  /** A handler that failed after its retries: `error`, with the handler's error. */
  handlerFailed(id: string, tries: number, error: unknown, handlerId?: string): void {
    const which = handlerId === undefined ? 'A handler' : `Handler "${handlerId}"`;
    this.logger.error(
      handlerId === undefined
        ? { id, tries, err: error }
        : { id, handler: handlerId, tries, err: error },
      `${which} of alert ${id} failed after ${tries} ${tries === 1 ? 'try' : 'tries'}`,
    );
  }

  /** An internal problem that does not change an answer (a dedupe store that fails to release). */
  internalError(message: string, fields: Record<string, unknown>): void {
    this.logger.error(fields, message);
  }
}

/** Calls one listener; a throw or a rejection is logged and goes no further. */
function notify(listener: RejectedListener, rejection: RejectedDelivery, logger: Logger): void {
  const report = (error: unknown): void => {
    logger.error({ err: error }, 'churn-risk onRejected listener failed');
  };
  try {
    const returned = listener(rejection);
    if (typeof (returned as { then?: unknown } | null | undefined)?.then === 'function') {
      void Promise.resolve(returned).then(undefined, report);
    }
  } catch (error) {
    report(error);
  }
}

/** The error a refusal wraps (`cause`), when it is one. */
function causeOf(error: unknown): Error | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error ? cause : undefined;
}
