import { WebhookVerificationError } from '../errors/webhook-verification-error.js';
import {
  alertIdentity,
  eventSchemas,
  type ChurnRiskAlert,
  type WebhookEventMap,
} from '../payload/alert-schema.js';
import { parseEvent } from '../payload/parse-event.js';
import { toBytes } from '../signature/bytes.js';
import { createVerifier } from '../signature/verify.js';
import { drainQueue } from './drain.js';
import { getHeader } from './get-header.js';
import { resolveOptions, type ResolvedOptions } from './resolve-options.js';
import { acceptedResult, errorResponse, jsonResult, payloadTooLarge } from './responses.js';
import { runHandlers, type AnyHandler, type RunHandlersInput } from './run-handlers.js';
import { createFetchHandler, createNodeHandler } from './transports.js';
import type {
  DrainOptions,
  ErrorHandler,
  EventHandler,
  Receiver,
  ReceiverOptions,
  ReceiverRequest,
  ReceiverResult,
  ReceiverStats,
} from './types.js';
import { createWorkQueue, type Job, type WorkQueue } from './work-queue.js';

const refuse = (code: 'CLOSED' | 'OVERLOADED' | 'HANDLER_FAILED', message: string): never => {
  throw new WebhookVerificationError(code, message);
};
const refuseClosed = (): never => refuse('CLOSED', 'The receiver is shutting down; retry later.');
const refuseFailed = (): never => refuse('HANDLER_FAILED', 'A handler failed after its retries.');

/** One accepted alert in the work queue: runs its handlers and counts their failures. */
class AlertJob implements Job {
  ready = false;
  startWhenReady = false;
  /** Handlers that failed after their retries. */
  failures = 0;
  /** Settles when the job has finished (the answer's `done`). */
  readonly done: Promise<void>;
  #resolveDone!: () => void;
  readonly #input: RunHandlersInput;
  readonly #counts: { failed: number };

  constructor(input: RunHandlersInput, counts: { failed: number }) {
    this.#input = input;
    this.#counts = counts;
    this.done = new Promise<void>((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  run(): unknown {
    const failed = runHandlers(this.#input);
    if (typeof failed === 'number') {
      this.failures = failed;
      return undefined;
    }
    return failed.then((count) => {
      this.failures = count;
    });
  }

  finished(): void {
    this.#counts.failed += this.failures;
    this.#resolveDone();
  }
}

class WebhookReceiver implements Receiver {
  readonly #config: ResolvedOptions;
  readonly #verify: ReturnType<typeof createVerifier>;
  readonly #queue: WorkQueue;
  // Replaced, never mutated, when handlers are added or removed: an alert keeps the lists it was
  // accepted with, without a copy per alert.
  #handlers: readonly AnyHandler[] = [];
  #errorHandlers: readonly ErrorHandler[] = [];
  readonly #counts = { accepted: 0, duplicates: 0, failed: 0 };
  /** Sync mode: alerts being processed, each with whether its handlers all succeeded. */
  readonly #syncInFlight = new Map<string, Promise<boolean>>();
  #closed = false;

  readonly fetch: Receiver['fetch'];
  readonly node: Receiver['node'];

  constructor(options: ReceiverOptions) {
    const config = resolveOptions(options);
    this.#config = config;
    this.#verify = createVerifier({
      secret: config.secret,
      tolerance: config.tolerance,
      signedContent: config.signedContent,
      now: config.now,
    });
    this.#queue = createWorkQueue(config.concurrency, config.maxQueue);
    const handle = (request: ReceiverRequest): Promise<ReceiverResult> => this.handle(request);
    this.fetch = createFetchHandler(handle, config.maxBodyBytes);
    this.node = createNodeHandler(handle, config.maxBodyBytes);
  }

  get maxBodyBytes(): number {
    return this.#config.maxBodyBytes;
  }

  get stats(): ReceiverStats {
    return { queued: this.#queue.queued, running: this.#queue.running, ...this.#counts };
  }

  on<K extends keyof WebhookEventMap>(name: K, handler: EventHandler<WebhookEventMap, K>): this {
    if (!Object.hasOwn(eventSchemas, name)) throw new TypeError(`Unknown event "${name}".`);
    if (typeof handler !== 'function') throw new TypeError('A handler must be a function.');
    this.#handlers = [...this.#handlers, handler];
    return this;
  }

  off<K extends keyof WebhookEventMap>(_name: K, handler: EventHandler<WebhookEventMap, K>): this {
    const index = this.#handlers.lastIndexOf(handler);
    if (index >= 0) this.#handlers = this.#handlers.toSpliced(index, 1);
    return this;
  }

  onError(handler: ErrorHandler): this {
    if (typeof handler !== 'function') throw new TypeError('An error handler must be a function.');
    this.#errorHandlers = [...this.#errorHandlers, handler];
    return this;
  }

  handle(request: ReceiverRequest): Promise<ReceiverResult> {
    // Up to the answer, the usual path is synchronous (the default dedupe store answers at once):
    // one promise per delivery instead of one per step.
    try {
      const result = this.#process(request);
      return result instanceof Promise ? result.catch(errorResponse) : Promise.resolve(result);
    } catch (error) {
      return Promise.resolve(errorResponse(error));
    }
  }

  drain(options: DrainOptions = {}): Promise<void> {
    return drainQueue(this.#queue, options.timeoutMs);
  }

  close(options: DrainOptions = {}): Promise<void> {
    this.#closed = true;
    return this.drain(options);
  }

  #process({ method, headers, body }: ReceiverRequest): ReceiverResult | Promise<ReceiverResult> {
    const config = this.#config;
    if (method.toUpperCase() !== 'POST') {
      throw new WebhookVerificationError('METHOD_NOT_ALLOWED', 'Only POST is accepted.');
    }
    const bytes = body === null || body === undefined ? new Uint8Array(0) : toBytes(body);
    if (bytes.byteLength > config.maxBodyBytes) throw payloadTooLarge(config.maxBodyBytes);
    this.#verify({
      body: bytes,
      signature: getHeader(headers, config.signatureHeader),
      timestamp: getHeader(headers, config.timestampHeader),
    });
    const parsed = parseEvent(bytes);
    if (parsed.kind === 'ignored') return jsonResult(202, { received: true, ignored: true });
    if (this.#closed) refuseClosed();

    const alert = parsed.payload;
    const id = alertIdentity(alert);
    const receivedAt = new Date(config.now());
    const claimed = this.#claim(id);
    if (typeof claimed === 'boolean') return this.#dispatch(alert, id, receivedAt, claimed);
    return claimed.then((isNew) => this.#dispatch(alert, id, receivedAt, isNew));
  }

  /** After the dedupe claim: answer a duplicate, or queue the alert's handlers. */
  #dispatch(
    alert: ChurnRiskAlert,
    id: string,
    receivedAt: Date,
    isNew: boolean,
  ): ReceiverResult | Promise<ReceiverResult> {
    if (!isNew) return this.#duplicate(id);
    if (this.#closed) {
      return this.#release(id).then(refuseClosed);
    }
    const config = this.#config;
    const job = new AlertJob(
      {
        alert,
        id,
        receivedAt,
        handlers: this.#handlers,
        errorHandlers: this.#errorHandlers,
        retry: config.retry,
      },
      this.#counts,
    );
    if (!this.#queue.tryPush(job)) {
      return this.#release(id).then(() =>
        refuse('OVERLOADED', 'Too many alerts are waiting to be processed; retry later.'),
      );
    }
    this.#counts.accepted++;
    if (config.mode === 'async') return acceptedResult(job.done);
    return this.#settleSync(id, job);
  }

  /**
   * A delivery of an alert already claimed. Sync mode: a redelivery that arrives while the first
   * delivery is still being processed gets that delivery's outcome, so a failure is answered 500
   * here too and not lost.
   */
  #duplicate(id: string): ReceiverResult | Promise<ReceiverResult> {
    const first = this.#syncInFlight.get(id);
    const answer = (): ReceiverResult => {
      this.#counts.duplicates++;
      return jsonResult(202, { received: true, duplicate: true });
    };
    if (first === undefined) return answer();
    return first.then((succeeded) => (succeeded ? answer() : refuseFailed()));
  }

  /** Sync mode: answers once the handlers have run; a failure frees the identity and is a 500. */
  async #settleSync(id: string, job: AlertJob): Promise<ReceiverResult> {
    const done = job.done;
    this.#syncInFlight.set(
      id,
      done.then(() => job.failures === 0),
    );
    await done;
    // Release before forgetting the outcome: a redelivery either sees the failed outcome or finds
    // the identity free, never a claimed identity with no outcome.
    if (job.failures > 0) await this.#release(id); // so that the service's redelivery runs again
    this.#syncInFlight.delete(id);
    if (job.failures > 0) refuseFailed();
    return acceptedResult();
  }

  /**
   * True when the alert is new; synchronous when the store is. A failing store answers 503, so
   * that the sender retries.
   */
  #claim(id: string): boolean | Promise<boolean> {
    const dedupe = this.#config.dedupe;
    if (dedupe === undefined) return true;
    const storeFailed = (): never =>
      refuse('OVERLOADED', 'The receiver could not record the delivery; retry later.');
    let claimed: boolean | Promise<boolean>;
    try {
      claimed = dedupe.store.claim(id, dedupe.ttlMs);
    } catch {
      return storeFailed();
    }
    if (typeof claimed === 'boolean') return claimed;
    return Promise.resolve(claimed).then((isNew) => isNew, storeFailed);
  }

  async #release(id: string): Promise<void> {
    try {
      await this.#config.dedupe?.store.release(id);
    } catch (error) {
      console.error(`[churn-risk] The dedupe store failed to release alert ${id}:`, error);
    }
  }
}

/**
 * Creates a webhook receiver (SPEC section 4): it verifies each delivery, answers with the status
 * table's codes and runs the registered handlers with retries, deduplication and a bounded queue.
 * Throws `TypeError` for a missing secret or a bad option.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET! });
 * receiver.on('churn_risk_alert', async (alert) => notifyTeam(alert.userId, alert.score));
 * http.createServer(receiver.node).listen(3000);
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  return new WebhookReceiver(options);
}
