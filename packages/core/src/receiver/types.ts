import type { WebhookEventMap } from '../payload/alert-schema.js';
import type { Logger } from '../observability/logger.js';
import type { RejectedDelivery } from '../observability/receiver-observer.js';
import type { ReceiverTracer } from '../observability/receiver-tracer.js';
import type { AlertQueue, SweepOptions, SweepResult } from '../queue-port/alert-queue.js';
import type { NodeRequestListener } from './node-types.js';
import type { Secret } from '../signature/secrets.js';
import type { ErrorHandler, EventHandler, HandlerOptions } from '../queue-port/handler-types.js';
export type {
  AlertContext,
  AnyHandler,
  ErrorHandler,
  EventHandler,
  HandlerOptions,
  HandlerRegistration,
} from '../queue-port/handler-types.js';
import type { HeadersInput, SignedContent } from '../signature/verify.js';
export type { HeadersInput } from '../signature/verify.js';

/**
 * Where the receiver remembers the alert identities it has accepted, so that a redelivered alert
 * does not run the handlers twice. The default is an in-memory LRU (`createMemoryDedupeStore`);
 * use a shared store (Redis `SET key 1 NX PX ttl`, a database unique key) when several instances
 * receive the same webhook.
 */
export interface DedupeStore {
  /**
   * Atomically records `key` for `ttlMs` milliseconds. Returns `true` when this caller is the first
   * within the time to live (process the alert), `false` when the key is already held (a duplicate).
   */
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
  /** Forgets `key`, so that the next delivery of the alert is processed again. */
  release(key: string): void | Promise<void>;
}

/** Retry policy of a failing handler. */
export interface RetryOptions {
  /** Further tries after the first failure. Default 3. */
  retries?: number;
  /**
   * Delay before the next try, in milliseconds, after try `attempt` failed: `attempt` counts as
   * `shouldRetry`'s and `context.attempt` do, 0 for the first try. Default `1000 * 2 ** attempt`:
   * 1 s, 2 s, 4 s.
   *
   * @example
   * backoffMs: (attempt) => 500 * (attempt + 1), // 500 ms after the first try, then 1 s, 1.5 s
   */
  backoffMs?: (attempt: number) => number;
  /**
   * Whether a handler that failed try `attempt` (its `context.attempt`: 0 for the first) with
   * `error` is tried again; asked for each handler that failed a try that was not the last. Default
   * `defaultShouldRetry`: `false` for an error whose `retryable` property is `false` (the client's
   * `ServiceError`s that no retry mends, such as `NOT_FOUND`), `true` otherwise. A
   * `NonRetryableError` is never retried, whatever this answers. A throw is logged and the default
   * answers instead. When one handler's error is not retried, the
   * alert fails at that try (see the README, "Errors that must not be retried").
   *
   * @example
   * // Retry a timeout once at most; the default for anything else.
   * shouldRetry: (error, attempt) =>
   *   isServiceError(error) && error.code === 'TIMEOUT' ? attempt < 1 : defaultShouldRetry(error),
   */
  shouldRetry?: (error: unknown, attempt: number) => boolean;
}

/** Options of the in-memory or custom dedupe store (how long an identity is kept: `dedupeTtlMs`). */
export interface DedupeOptions {
  /** Most identities kept by the in-memory store; the least recently used go first. Default 100,000. */
  maxEntries?: number;
  /** A custom store (shared between instances). `maxEntries` does not apply to it. */
  store?: DedupeStore;
}

/** Options of `createReceiver`. */
export interface ReceiverOptions {
  /** The webhook signing secret, or several while rotating. Required. */
  secret: Secret;
  /** Largest allowed `|now - timestamp|`, in seconds. Default 300. */
  tolerance?: number;
  /** What the signature covers. Default `'timestamp.body'`. */
  signedContent?: SignedContent;
  /** Name of the signature header, matched case-insensitively. Default `x-service-signature`. */
  signatureHeader?: string;
  /** Name of the timestamp header, matched case-insensitively. Default `x-service-timestamp`. */
  timestampHeader?: string;
  /** Largest accepted body, in bytes. Default 1 MiB (1,048,576). */
  maxBodyBytes?: number;
  /**
   * How long a delivery's body may take to arrive whole, in ms, from when reading starts: a body
   * still incomplete then (a sender that stalls, a `Content-Length` larger than what it sends) is
   * answered `408 REQUEST_TIMEOUT` and its connection closed. Default 10,000 (10 s).
   */
  bodyTimeoutMs?: number;
  /** `'async'` (default): answer 202, then process. `'sync'`: process, then answer. */
  mode?: 'async' | 'sync';
  /** Alerts processed at once (an alert's handlers run side by side). Default 10. */
  concurrency?: number;
  /**
   * `'per-user'`: the alerts of one `userId` never run at the same time (across every process
   * sharing the queue's store; other users' alerts still run side by side up to `concurrency`),
   * the oldest `triggeredAt` of a user's waiting alerts starts first, and an alert waiting for a
   * retry keeps its user's place until it completes or fails for good. A try of an alert that a
   * newer alert of its user has superseded sees `context.supersededBy`; handlers registered with
   * `superseded: 'skip'` are not run for it. Default `'none'`: alerts run as they come.
   */
  order?: 'none' | 'per-user';
  /** Alerts waiting for a free slot; beyond it deliveries get 503 `OVERLOADED`. Default 10,000. */
  maxQueue?: number;
  /** Further tries of a failed handler (number), or the full policy. Default 3, backoff 1 s, 2 s, 4 s. */
  retries?: number | RetryOptions;
  /** Duplicate suppression by alert identity, or `false` to turn it off. Default 72 h, 100,000, in memory. */
  dedupe?: false | DedupeOptions;
  /**
   * How long an alert identity is remembered for de-duplication, in ms: the same option as the
   * durable queues'. Default 72 hours.
   */
  dedupeTtlMs?: number;
  /**
   * Where accepted alerts go and where handlers take them from. Default: an in-memory queue
   * (`createMemoryQueue`) configured by `maxQueue` and `dedupe`. `createRedisQueue` from
   * `@churn-risk/redis` makes acceptance durable and shared between instances.
   */
  queue?: AlertQueue;
  /**
   * Whether this process runs handlers (default `true`). `false` makes a web process that only
   * accepts alerts into a durable `queue`; worker processes run the handlers. `'invocation'`
   * is for function platforms where no process outlives a request (Vercel, Netlify,
   * Lambda with a database): after the `202`, inside the platform's keep-alive (`after()`,
   * `waitUntil`), the receiver runs the durable queue's due alerts, the one just accepted among
   * them, while `keepAliveBudgetMs` lasts (a `receiver.sweep` of that budget); retries and the
   * alerts of a function that stopped are run by the next invocations or by a scheduled sweep.
   * The answer never waits for it.
   */
  consume?: boolean | 'invocation';
  /**
   * The platform's budget for work kept alive by a `waitUntil`, in milliseconds from the answer:
   * Cloudflare Workers cancel it after 30 s, Vercel ends a function at its `maxDuration`. An alert
   * handed to a `waitUntil` starts no retry whose delay ends past the budget, and if the budget is
   * about to end (at 90 % of it, at most 5 s before its end) while the alert is not done,
   * `onError` gets an `AlertCutOffError` (code `CUT_OFF`) once, one line is logged at `error`
   * naming the fix (a durable queue), and no further try runs. Default 30,000 in workerd (Cloudflare
   * Workers), none elsewhere (set it to your `maxDuration` on Vercel). Deliveries without a
   * `waitUntil`, and durable queues, have no budget, but for `consume: 'invocation'`, whose sweep
   * after each answer runs within it (no take in its last fifth).
   */
  keepAliveBudgetMs?: number;
  /**
   * Where the receiver logs: a pino-style logger, called as `(fields, message)`.
   * Every refused delivery at `warn` with its `status` and `code`, every accepted alert at `debug`
   * with its identity, a handler that failed after its retries at `error`. Nothing logged holds a
   * secret, a signature header, an expected signature or the body. Default: errors (a handler that
   * failed, when no `onError` handler is registered; each `5xx` answer with its fix; for each of
   * `401`, `413` and `400`, at most one line a minute summarising those refusals) to
   * `console.error`, nothing else.
   *
   * @example
   * import pino from 'pino';
   * const receiver = createReceiver({ secret, logger: pino({ level: 'info' }) });
   */
  logger?: Logger;
  /**
   * An OpenTelemetry tracer for the receiver's spans: the `receive` span of each
   * delivery and the `process` span of each handler try go to it, whether or not an SDK is
   * registered globally. Without it, spans go to the SDK registered through `@opentelemetry/api`,
   * which the receiver loads itself where Node's `require` exists. Hand one in where the receiver
   * cannot load the API: Cloudflare Workers (without `nodejs_compat`), other edge runtimes, a
   * bundle. Metrics still need the API loaded by the receiver (Node).
   *
   * @example
   * import { trace } from '@opentelemetry/api';
   * const receiver = createReceiver({ secret, tracer: trace.getTracer('my-worker') });
   */
  tracer?: ReceiverTracer;
  /** Clock in milliseconds, like `Date.now` (for tests). */
  now?: () => number;
}

/**
 * Options of `createQueueReceiver`: those of `createReceiver` with `queue` required, and without
 * `maxQueue`, `dedupe` and `dedupeTtlMs`, which configure the in-memory queue (the durable queue de-duplicates
 * and bounds itself).
 */
export interface QueueReceiverOptions extends Omit<
  ReceiverOptions,
  'queue' | 'maxQueue' | 'dedupe' | 'dedupeTtlMs'
> {
  /** The durable queue: `createSqsQueue`, `createRedisQueue`, `createPostgresQueue`, `createDurableQueue`... */
  queue: AlertQueue;
}

/** A framework-free request: what an adapter hands to `receiver.handle`. */
export interface ReceiverRequest {
  method: string;
  headers: HeadersInput;
  /** The raw body exactly as received (never a re-serialised JSON value). */
  body: string | Uint8Array | ArrayBuffer | undefined | null;
  /**
   * The platform's way to keep working after the answer (`ctx.waitUntil` on Workers, Vercel's
   * `waitUntil`). Called before a verified alert is accepted, with a promise that settles once
   * the alert's processing is done. When it throws, nothing is accepted (no dedupe claim, no
   * handler run) and the answer is `500 INTERNAL_ERROR`, so the sender redelivers.
   */
  waitUntil?: WaitUntil | undefined;
}

/** A platform's `waitUntil`: keeps the process or isolate alive until `promise` settles. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/** A framework-free answer. Header names are lower-case; the body is JSON text. */
export interface ReceiverResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * Settles (always resolves, never rejects) when the processing of this delivery has finished:
   * at once for error answers, duplicates and ignored events; after the handlers (and their retries
   * and `onError`) in async mode. Adapters keep it alive as their platform needs (`waitUntil`).
   */
  done: Promise<void>;
}

/** Counters of the receiver, for tests, examples and benchmarks. */
export interface ReceiverStats {
  /** Alerts waiting for a free processing slot. */
  queued: number;
  /** Alerts being processed now (including handlers waiting for a retry). */
  running: number;
  /** Alerts accepted for processing since creation. */
  accepted: number;
  /** Deliveries answered as duplicates. */
  duplicates: number;
  /** Handler runs that failed after all their retries. */
  failed: number;
  /**
   * Handler runs skipped because the alert was superseded (order per user, handlers registered
   * with `superseded: 'skip'`): normal, not a failure.
   */
  superseded: number;
}

/** The webhook receiver returned by `createReceiver`. */
export interface Receiver<E = WebhookEventMap> {
  /**
   * Registers a handler of event `name`. Several may be registered; each retries and fails on its
   * own. `options.id` names the handler in logs, spans and failed alerts, and is its identity in
   * a durable queue's record of the handlers that succeeded: a non-empty string, unique
   * among the receiver's handlers. With a durable queue and two or more handlers every handler
   * needs one. A `TypeError` otherwise.
   *
   * @example
   * receiver
   *   .on('churn_risk_alert', createCrmTask, { id: 'crm-task' })
   *   .on('churn_risk_alert', notifySlack, { id: 'slack' });
   */
  on<K extends keyof E>(name: K, handler: EventHandler<E, K>, options?: HandlerOptions): this;
  /** Removes a handler registered with `on`. */
  off<K extends keyof E>(name: K, handler: EventHandler<E, K>): this;
  /** Registers a handler of failures that remain after a handler's retries. */
  onError(handler: ErrorHandler): this;
  /**
   * Registers a listener of refused deliveries (`status`, `code`, `message`, `receivedAt`), for
   * security monitoring. A listener that throws or rejects never changes the answer.
   *
   * @example
   * receiver.onRejected(({ status, code }) => {
   *   if (code === 'INVALID_SIGNATURE') metrics.increment('forged_webhooks');
   * });
   */
  onRejected(listener: (rejection: RejectedDelivery) => unknown): this;
  /** Verifies, parses and dispatches one delivery; never rejects. */
  handle(request: ReceiverRequest): Promise<ReceiverResult>;
  /**
   * The answer to a delivery an adapter refused before handing it over (a body over
   * `maxBodyBytes` while reading it): logged, passed to `onRejected` and counted like any refused
   * delivery. An error that is not a refusal (`WebhookVerificationError`, `DeliveryRejectedError`, ...) is answered 500 `INTERNAL_ERROR`.
   */
  refuse(error: unknown): ReceiverResult;
  /**
   * Web `Request` in, `Response` out. `waitUntil`, when given, is called before the alert is
   * accepted with a promise that settles once it is processed; if it throws, nothing is accepted
   * and the answer is `500 INTERNAL_ERROR`. A `Request` whose body was already read is answered
   * `500 RAW_BODY_MISSING`.
   *
   * @example
   * export default { fetch: (request, env, ctx) => receiver.fetch(request, { waitUntil: (p) => ctx.waitUntil(p) }) };
   */
  fetch(request: Request, options?: { waitUntil?: WaitUntil | undefined }): Promise<Response>;
  /**
   * A Node `(req, res)` request listener; never rejects. Typed by the members it uses
   * (`NodeRequest`, `NodeResponse`), so that these types need no `@types/node`: a `node:http`
   * request and response fit as they are.
   *
   * @example
   * createServer(receiver.node).listen(3000);
   */
  node: NodeRequestListener;
  /** Resolves when nothing is queued or running; rejects after `timeoutMs` if given. */
  drain(options?: {
    /** Give up waiting after this many milliseconds: the promise rejects with an `Error`. */
    timeoutMs?: number;
  }): Promise<void>;
  /**
   * Runs, in this process, the alerts of a durable queue that are due now, within `budgetMs`,
   * for platforms where no worker process outlives a request (a cron route on Vercel, a
   * scheduled Lambda): puts back the alerts whose taker died (expired leases; beside its first
   * takes, and what it put back is taken once it is done), and takes and runs due alerts (retries whose delay passed, alerts a stopped function left), as many at once as
   * `concurrency`, until nothing is due or the budget's last fifth begins; every try stores its
   * verdict as a worker's would. Resolves with what it did. Rejects with a `TypeError` without a
   * durable pull-based queue or with a budget under 1,000 ms, and with an `Error` naming the
   * store's failure when the store does not answer (a sweep route answers `503`). Two sweeps at once
   * never run one alert twice (leases).
   *
   * @example
   * const { completed, retried, failed, left } = await receiver.sweep({ budgetMs: 50_000 });
   */
  sweep(options: SweepOptions): Promise<SweepResult>;
  /**
   * Answers 503 `CLOSED` to new deliveries, stops taking alerts, waits for the running ones (an
   * in-process queue also finishes what is queued), and closes what the queue opened.
   */
  close(options?: {
    /** Give up waiting after this many milliseconds: the promise rejects with an `Error`. */
    timeoutMs?: number;
  }): Promise<void>;
  /** The body limit, for adapters that read the body themselves. */
  readonly maxBodyBytes: number;
  /** The body's deadline in ms (`bodyTimeoutMs`), for adapters that read the body themselves. */
  readonly bodyTimeoutMs: number;
  /**
   * The `consume` option as resolved: for adapters of platforms where an invocation ends with its
   * answer (plain Lambda), which must refuse `'invocation'`.
   */
  readonly consume: boolean | 'invocation';
  /**
   * The queue the receiver was created with (the in-memory queue when none was given), for
   * adapters of platforms that push the queue's messages to a function: `createLambdaHandler`
   * hands an SQS event to the receiver's own `createSqsQueue` queue. The receiver attaches,
   * feeds and closes it; calling its `accept`, `attach` or `close` yourself bypasses the receiver.
   */
  readonly queue: AlertQueue;
  /** A snapshot of the counters. */
  readonly stats: ReceiverStats;
  /**
   * For readiness probes: `ok` is false once the receiver is closed or its queue's store does not
   * answer. Never rejects.
   *
   * @example
   * app.get('/healthz', async (_req, res) => {
   *   const health = await receiver.health();
   *   res.status(health.ok ? 200 : 503).json(health);
   * });
   */
  health(): Promise<ReceiverHealth>;
}

/** What `receiver.health()` reports. */
export interface ReceiverHealth {
  /** True when the receiver takes deliveries and its queue's store answers. */
  ok: boolean;
  /** True after `close()`. */
  closed: boolean;
  /** Alerts waiting in this process. */
  queued: number;
  /** Alerts being processed in this process. */
  running: number;
  /** The queue's reachability, when the queue reports it (a durable queue such as Redis). */
  queue?: { kind: string; reachable: boolean; error?: string };
}
