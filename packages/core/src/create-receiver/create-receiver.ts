import type { TracerSpan as Span } from '../observability/receiver-tracer.js';
import { deliveryRefusal } from '../errors/delivery-refusal.js';
import { SyncHandlingFailedError } from '../errors/sync-handling-failed-error.js';
import { waitUntilFailed } from '../errors/integration-error.js';
import { ReceiverUnavailableError } from '../errors/receiver-unavailable-error.js';
import { DeliveryRejectedError, payloadTooLarge } from '../errors/delivery-rejected-error.js';
import { ReceiverObserver, type RejectedListener } from '../observability/receiver-observer.js';
import type { ReceiverTelemetry } from '../observability/telemetry.js';
import { toTraceCarrier } from '../observability/trace-carrier.js';
import { eventSchemas, type WebhookEventMap } from '../payload/alert-schema.js';
import { alertIdentity, parseEvent } from '../payload/parse-event.js';
import { toBytes } from '../signature/bytes.js';
import { createReceiverVerifier } from '#receiver-verifier';
import type { ReceiverVerifier } from '../signature/verify-async.js';
import { getHeader } from '../signature/verify.js';
import type {
  AcceptOptions,
  AcceptResult,
  AcceptedAlert,
  AlertQueue,
  AlertRecord,
  SweepOptions,
  SweepResult,
} from '../queue-port/alert-queue.js';
import { MIN_SWEEP_BUDGET_MS } from '../queue-port/alert-queue.js';
import { HandlerRegistry } from '../processing/handler-registry.js';
import { TryRunner } from '../processing/try-protocol.js';
import { PER_REQUEST_CONTEXTS } from '../processing/keep-alive.js';
import { waitForQueue } from '../processing/drain.js';
import type { HandlerOptions } from '../queue-port/handler-types.js';
import { receiverHealth } from '../receiver/health.js';
import { createMemoryQueue } from '../processing/memory-queue.js';
import { resolveOptions, type ResolvedOptions } from './resolve-options.js';
import { errorResponse, jsonResult } from '../receiver/responses.js';
import { createNodeHandler } from '#node-request';
import { createFetchHandler } from '../receiver/transports.js';
import type {
  ErrorHandler,
  EventHandler,
  Receiver,
  QueueReceiverOptions,
  ReceiverOptions,
  ReceiverHealth,
  ReceiverRequest,
  ReceiverResult,
  ReceiverStats,
  WaitUntil,
} from '../receiver/types.js';
import { isPromiseLike, type MaybePromise } from '../processing/maybe-promise.js';

const refuseClosed = (): never => {
  throw new ReceiverUnavailableError('CLOSED', 'The receiver is shutting down; retry later.');
};
const refuseFailed = (): never => {
  throw new SyncHandlingFailedError('A handler failed after its retries.');
};
const refuseFull = (): never => {
  throw new ReceiverUnavailableError(
    'OVERLOADED',
    'Too many alerts are waiting to be processed; retry later.',
  );
};
/** The queue's store failed or did not answer in time: 503, so that the sender retries. */
const storeFailed = (error: unknown): never => {
  if (deliveryRefusal(error) !== undefined) throw error;
  throw new ReceiverUnavailableError(
    'OVERLOADED',
    'The receiver could not record the delivery; retry later.',
    { cause: error },
  );
};

const ACCEPTED_BODY = JSON.stringify({ received: true });
const SETTLED: Promise<void> = Promise.resolve();

/** The usual answer, 202 `{"received":true}`, built without serializing anything. */
function acceptedResult(done: Promise<void> = SETTLED): ReceiverResult {
  return {
    status: 202,
    headers: { 'content-type': 'application/json' },
    body: ACCEPTED_BODY,
    done,
  };
}

/** The processing promise of an accepted alert; `undefined` for a duplicate or a full queue. */
function doneOf(result: AcceptResult): Promise<void> | undefined {
  return typeof result === 'object' ? result.done : undefined;
}

/**
 * Gives `waitUntil` a promise that settles with the alert's processing, before the alert is
 * accepted. Returns the function that settles it (with the processing, or at once when nothing
 * was accepted). A `waitUntil` that throws is a 500 `INTERNAL_ERROR`: nothing is accepted.
 */
const OWN_TURN: AcceptOptions = Object.freeze({ ownTurn: true });
const NOT_OWN_TURN: AcceptOptions = Object.freeze({});

/*
 * Cloudflare Workers (workerd) give each request an I/O context of its own and cancel what one
 * request started for another once the first has nothing left to wait for: there an alert handed
 * over with a `waitUntil` must not wait for a slot that another request frees
 * (`PER_REQUEST_CONTEXTS`). Node-based platforms keep a started alert alive through its own
 * `waitUntil` promise, so `concurrency` still holds there.
 */

function handOff(waitUntil: WaitUntil): (done?: Promise<void>) => void {
  let settle: (done?: Promise<void>) => void = () => undefined;
  const kept = new Promise<void>((resolve) => {
    settle = (done) => {
      resolve(done);
    };
  });
  try {
    waitUntil(kept);
  } catch (error) {
    throw waitUntilFailed(error);
  }
  return settle;
}

class WebhookReceiver implements Receiver {
  readonly #config: ResolvedOptions;
  /** Synchronous on node:crypto; a promise on crypto.subtle (workerd). */
  readonly #verify: ReceiverVerifier;
  readonly #queue: AlertQueue;
  readonly #registry: HandlerRegistry;
  readonly #consume: boolean | 'invocation';
  readonly #observer: ReceiverObserver;
  /** `undefined` when `@opentelemetry/api` is not installed and no `tracer` is handed in. */
  readonly #telemetry: ReceiverTelemetry | undefined;
  #consuming = false;
  readonly #counts = { accepted: 0, duplicates: 0, failed: 0, superseded: 0 };
  /** Sync mode: alerts being processed, each with whether its handlers all succeeded. */
  readonly #syncInFlight = new Map<string, Promise<boolean>>();
  #closed = false;

  readonly fetch: Receiver['fetch'];
  readonly node: Receiver['node'];

  constructor(options: ReceiverOptions, config: ResolvedOptions) {
    this.#config = config;
    this.#verify = createReceiverVerifier({
      secret: config.secret,
      tolerance: config.tolerance,
      signedContent: config.signedContent,
      now: config.now,
    });
    this.#queue = config.queue;
    this.#consume = config.consume;
    const queue = this.#queue;
    this.#observer = new ReceiverObserver({
      logger: options.logger,
      tracer: options.tracer,
      now: config.now,
      depth: queue.depth === undefined ? () => queue.queued : queue.depth.bind(queue),
    });
    this.#telemetry = this.#observer.telemetry;
    this.#registry = new HandlerRegistry(
      queue.durable === true ? queue.kind : undefined,
      config.order,
    );
    const runner = new TryRunner(
      this.#registry,
      config.concurrency,
      config.retry,
      this.#counts,
      this.#observer,
    );
    runner.order = config.order;
    this.#queue.attach(runner, { consume: config.consume });
    this.fetch = createFetchHandler(this);
    this.node = createNodeHandler(this);
  }

  get maxBodyBytes(): number {
    return this.#config.maxBodyBytes;
  }

  get bodyTimeoutMs(): number {
    return this.#config.bodyTimeoutMs;
  }

  get consume(): boolean | 'invocation' {
    return this.#consume;
  }

  get queue(): AlertQueue {
    return this.#queue;
  }

  get stats(): ReceiverStats {
    return { queued: this.#queue.queued, running: this.#queue.running, ...this.#counts };
  }

  on<K extends keyof WebhookEventMap>(
    name: K,
    handler: EventHandler<WebhookEventMap, K>,
    options?: HandlerOptions,
  ): this {
    if (!Object.hasOwn(eventSchemas, name)) throw new TypeError(`Unknown event "${name}".`);
    if (typeof handler !== 'function') throw new TypeError('A handler must be a function.');
    this.#registry.add(handler, options);
    this.#startConsuming();
    return this;
  }

  off<K extends keyof WebhookEventMap>(_name: K, handler: EventHandler<WebhookEventMap, K>): this {
    this.#registry.remove(handler);
    return this;
  }

  onError(handler: ErrorHandler): this {
    if (typeof handler !== 'function') throw new TypeError('An error handler must be a function.');
    this.#registry.addErrorHandler(handler);
    return this;
  }

  onRejected(listener: RejectedListener): this {
    this.#observer.addRejectedListener(listener);
    return this;
  }

  health(): Promise<ReceiverHealth> {
    return receiverHealth(this.#queue, this.#closed);
  }

  refuse(error: unknown): ReceiverResult {
    return this.#refused(error, undefined);
  }

  handle(request: ReceiverRequest): Promise<ReceiverResult> {
    // Up to the answer, the usual path is synchronous (the default queue answers at once): one
    // promise per delivery instead of one per step. Without an OpenTelemetry SDK, `span` is
    // undefined and the instrumentation below is a few comparisons.
    const span = this.#telemetry?.startReceive();
    try {
      const result = this.#process(request, span);
      if (!isPromiseLike(result)) return Promise.resolve(this.#answered(result, span));
      return Promise.resolve(result).then(
        (answer) => this.#answered(answer, span),
        (error: unknown) => this.#refused(error, span),
      );
    } catch (error) {
      return Promise.resolve(this.#refused(error, span));
    }
  }

  /** A delivery answered without an error: the span and the delivery counter. */
  #answered(result: ReceiverResult, span: Span | undefined): ReceiverResult {
    this.#telemetry?.endReceive(span, result.status, undefined);
    return result;
  }

  /** A refused delivery: logged, told to `onRejected` listeners and counted, then answered. */
  #refused(error: unknown, span: Span | undefined): ReceiverResult {
    const { status, code } = this.#observer.refused(error);
    this.#telemetry?.endReceive(span, status, code);
    return errorResponse(error);
  }

  sweep(options: SweepOptions): Promise<SweepResult> {
    const queue = this.#queue;
    if (queue.sweep === undefined) {
      return Promise.reject(
        new TypeError(
          `receiver.sweep needs a durable pull-based queue (createRedisQueue, createPostgresQueue, ` +
            `createDurableQueue); this receiver's queue is ${queue.kind}.`,
        ),
      );
    }
    if (this.#closed) return Promise.reject(new Error('The receiver is closed.'));
    return queue.sweep(options);
  }

  drain(options: { timeoutMs?: number } = {}): Promise<void> {
    const queue = this.#queue;
    return waitForQueue(queue, (signal) => queue.idle(signal), options.timeoutMs);
  }

  close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.#closed = true;
    this.#telemetry?.dispose();
    this.#observer.flushSummaries();
    const queue = this.#queue;
    return waitForQueue(queue, (signal) => queue.close(signal), options.timeoutMs);
  }

  /**
   * Handlers run in this process once one is registered (unless `consume: false`). The queue is
   * told on a later microtask, so that handlers registered one after another are all in place
   * before a durable queue hands out its first job.
   */
  #startConsuming(): void {
    if (this.#consuming || this.#consume !== true) return;
    this.#consuming = true;
    queueMicrotask(() => {
      if (!this.#closed) this.#queue.consume();
    });
  }

  #process(
    { method, headers, body, waitUntil }: ReceiverRequest,
    span: Span | undefined,
  ): MaybePromise<ReceiverResult> {
    const config = this.#config;
    if (method.toUpperCase() !== 'POST') {
      throw new DeliveryRejectedError('METHOD_NOT_ALLOWED', 'Only POST is accepted.');
    }
    const bytes = body === null || body === undefined ? new Uint8Array(0) : toBytes(body);
    if (bytes.byteLength > config.maxBodyBytes) throw payloadTooLarge(config.maxBodyBytes);
    const verified = this.#verify({
      body: bytes,
      signature: getHeader(headers, config.signatureHeader),
      timestamp: getHeader(headers, config.timestampHeader),
    });
    // Where only WebCrypto's HMAC exists, verification is asynchronous (a rejection is refused
    // like a throw, by `handle`).
    if (verified !== undefined) {
      return verified.then(() => this.#verified(bytes, waitUntil, span));
    }
    return this.#verified(bytes, waitUntil, span);
  }

  /** A verified delivery: parsed, then accepted (or ignored). */
  #verified(
    bytes: Uint8Array,
    waitUntil: WaitUntil | undefined,
    span: Span | undefined,
  ): MaybePromise<ReceiverResult> {
    const config = this.#config;
    const parsed = parseEvent(bytes);
    if (parsed.kind === 'ignored') {
      this.#observer.ignored(parsed.name);
      return jsonResult(202, { received: true, ignored: true });
    }
    if (this.#closed) refuseClosed();

    const alert = parsed.payload;
    const entry: AlertRecord<'accepted'> = {
      id: alertIdentity(alert),
      alert,
      receivedAt: config.now(),
    };
    if (span !== undefined) {
      span.setAttribute('messaging.message.id', entry.id);
      entry.traceContext = toTraceCarrier(span.spanContext()); // the process spans link to it
    }
    // The platform is told to wait before anything is claimed, so that a `waitUntil`
    // that throws leaves the alert unclaimed for the redelivery.
    const handedOff = waitUntil === undefined ? undefined : handOff(waitUntil);
    let accepted: MaybePromise<AcceptResult>;
    try {
      accepted =
        handedOff === undefined
          ? this.#queue.accept(entry)
          : this.#queue.accept(entry, this.#handedOffOptions());
    } catch (error) {
      handedOff?.();
      return storeFailed(error);
    }
    // The usual path (the in-memory queue answers at once) makes no closure: measured by
    // `pnpm bench receiver`.
    if (!isPromiseLike(accepted)) return this.#accepted(entry.id, accepted, handedOff);
    return Promise.resolve(accepted).then(
      (result) => this.#accepted(entry.id, result, handedOff),
      (error: unknown) => {
        handedOff?.();
        return storeFailed(error);
      },
    );
  }

  /** The queue's answer: the platform keeps the processing alive, then the status. */
  #accepted(
    id: string,
    result: AcceptResult,
    handedOff: ((done?: Promise<void>) => void) | undefined,
  ): MaybePromise<ReceiverResult> {
    handedOff?.(this.#invocation(result) ?? doneOf(result));
    return this.#answer(id, result);
  }

  /**
   * `consume: 'invocation'`: once an alert was accepted, a sweep of the queue's due
   * alerts within what is left of the keep-alive budget, started now (the answer does not wait for
   * it); its promise is what the platform's `waitUntil` keeps alive. `undefined` in other modes,
   * for a duplicate, or with less than a sweep's minimum left.
   */
  #invocation(result: AcceptResult): Promise<void> | undefined {
    const budgetMs = this.#config.keepAliveBudgetMs;
    const queue = this.#queue;
    if (this.#consume !== 'invocation' || typeof result !== 'object' || queue.sweep === undefined) {
      return undefined;
    }
    if (budgetMs === undefined || budgetMs < MIN_SWEEP_BUDGET_MS) return undefined;
    return queue.sweep({ budgetMs }).then(
      () => undefined,
      (error: unknown) => {
        this.#observer.logger.error(
          { err: error },
          `churn-risk: the invocation's sweep failed (${error instanceof Error ? error.message : String(error)}); ` +
            'the alert stays queued for the next one or a scheduled sweep',
        );
      },
    );
  }

  /**
   * How an alert handed to a `waitUntil` is accepted: on workerd it runs in a turn its own request
   * scheduled (`ownTurn`), and under the platform's keep-alive budget when there is one.
   */
  #handedOffOptions(): AcceptOptions {
    const budgetMs = this.#config.keepAliveBudgetMs;
    if (budgetMs === undefined) return PER_REQUEST_CONTEXTS ? OWN_TURN : NOT_OWN_TURN;
    const keepAlive = { budgetMs, startedAt: Date.now() };
    const first = this.#consume === 'invocation'; // the sweep that follows takes it first
    return { ownTurn: PER_REQUEST_CONTEXTS, keepAlive, first };
  }

  /** After the queue took (or refused) the alert: the answer. */
  #answer(id: string, result: AcceptResult): MaybePromise<ReceiverResult> {
    if (result === 'duplicate') return this.#duplicate(id);
    if (result === 'full') return refuseFull();
    this.#counts.accepted++;
    // Without a logger the observer has nothing to say: not even a call on the usual path.
    if (this.#observer.verbose) this.#observer.accepted(id);
    if (this.#config.mode === 'async') return acceptedResult(result.done);
    return this.#settleSync(id, result);
  }

  /**
   * A delivery of an alert already claimed. Sync mode: a redelivery that arrives while the first
   * delivery is still being processed gets that delivery's outcome, so a failure is answered 500
   * here too and not lost.
   */
  #duplicate(id: string): MaybePromise<ReceiverResult> {
    const first = this.#syncInFlight.get(id);
    const answer = (): ReceiverResult => {
      this.#counts.duplicates++;
      this.#observer.duplicate(id);
      return jsonResult(202, { received: true, duplicate: true });
    };
    if (first === undefined) return answer();
    return first.then((succeeded) => (succeeded ? answer() : refuseFailed()));
  }

  /** Sync mode: answers once the handlers have run; a failure frees the identity and is a 500. */
  async #settleSync(id: string, accepted: AcceptedAlert): Promise<ReceiverResult> {
    const failures = (): number => accepted.failures ?? 0;
    const done = accepted.done;
    this.#syncInFlight.set(
      id,
      done.then(() => failures() === 0),
    );
    await done;
    const failed = failures() > 0;
    // Release before forgetting the outcome: a redelivery either sees the failed outcome or finds
    // the identity free, never a claimed identity with no outcome.
    if (failed) await this.#release(id); // so that the service's redelivery runs again
    this.#syncInFlight.delete(id);
    if (failed) refuseFailed();
    return acceptedResult();
  }

  async #release(id: string): Promise<void> {
    try {
      await this.#queue.release?.(id);
    } catch (error) {
      this.#observer.internalError(`The queue failed to release alert ${id}`, { id, err: error });
    }
  }
}

/**
 * `createReceiver`'s queue when none is given: in memory, made of `maxQueue` and `dedupe`. It
 * processes alerts where they were accepted, so `consume` must be `true` (the default) with it.
 */
function memoryQueueOf(options: ReceiverOptions, now: () => number): AlertQueue {
  const consume = options.consume ?? true;
  if (consume !== true) {
    throw new TypeError(
      `consume: ${JSON.stringify(consume)} needs a durable queue (e.g. createRedisQueue from ` +
        '@churn-risk/redis): the in-memory queue processes alerts only where they were accepted.',
    );
  }
  return createMemoryQueue({
    ...(options.maxQueue === undefined ? {} : { maxQueue: options.maxQueue }),
    ...(options.dedupeTtlMs === undefined ? {} : { dedupeTtlMs: options.dedupeTtlMs }),
    dedupe: options.dedupe === false ? false : { ...options.dedupe, now },
  });
}

/**
 * Creates a webhook receiver: it verifies each delivery, answers with the status
 * table's codes and runs the registered handlers with retries, deduplication and a bounded queue.
 * Without a `queue` option, the queue is in memory. Throws `TypeError` for a missing secret or a
 * bad option.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET! });
 * receiver.on('churn_risk_alert', async (alert) => notifyTeam(alert.userId, alert.score));
 * http.createServer(receiver.node).listen(3000);
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  return new WebhookReceiver(options, resolveOptions(options, memoryQueueOf));
}

/**
 * Creates the same receiver as `createReceiver({ secret, queue })` for a durable queue, given as
 * `queue` (required), without the in-memory queue's code: a bundle of it is smaller
 * (a Lambda function in queue mode, a Worker). `dedupe` and `maxQueue` configure the in-memory
 * queue and are refused. Throws `TypeError` without a queue or a secret, or for a bad option.
 *
 * @example
 * const queue = createSqsQueue({ queueUrl, dedupeTable, failedTable }); // @churn-risk/lambda
 * const receiver = createQueueReceiver({ secret: process.env.CHURN_RISK_WEBHOOK_SECRET!, queue });
 * receiver.on('churn_risk_alert', async (alert) => notifyTeam(alert.userId, alert.score));
 */
export function createQueueReceiver(options: QueueReceiverOptions): Receiver {
  return new WebhookReceiver(options, resolveOptions(options, undefined, 'createQueueReceiver'));
}
