import type { AlertRecord, Logger } from '@churn-risk/core';
import type { FailedListOptions, QueueCounts, QueueHealth } from '@churn-risk/core/store';
import type { NodeRequest, NodeResponse } from '@churn-risk/core/adapter';

/**
 * The failed set the page reads and retries: any back end's queue as it is (`createRedisQueue`,
 * `createPostgresQueue`, `createSqsQueue`) or D1's failed store (`createFailedStore`). Counts
 * come from `counts()` where the store has it, else the failed count from `count()`; health from
 * `health()`, else from whether the counts could be read.
 */
export interface OpsQueue {
  /** Failed alerts, newest first. */
  failed(options?: FailedListOptions): Promise<AlertRecord<'failed'>[]>;
  /** Puts one failed alert back (by its id); rejects with a `TypeError` when there is none. */
  retry(id: string): Promise<void>;
  /** Puts back every alert failed when it is called; resolves with how many. */
  retryAll(): Promise<number>;
  /** Alerts by state. */
  counts?(): Promise<QueueCounts>;
  /** How many alerts are failed (a store without `counts()`). */
  count?(): Promise<number>;
  /** Whether the store answers (never throws, never holds a secret). */
  health?(): Promise<QueueHealth>;
  /** The back end's short name (`'redis'`, `'postgres'`, `'sqs'`), shown in the page's title. */
  readonly kind?: string;
  /**
   * True when no worker takes alerts (a receiver with `consume: 'invocation'` is attached to a
   * durable queue): the page then says that a retried alert runs at the next sweep.
   */
  readonly invocationMode?: boolean;
}

/**
 * Decides whether `request` may see the page and retry alerts: `true` lets it through, `false`
 * answers `401` with no data, and a `Response` (a redirect to a login page, a `401` with a
 * `WWW-Authenticate` challenge) is sent as it is. Anything else counts as `false`.
 */
export type OpsAuthorize = (request: Request) => boolean | Response | Promise<boolean | Response>;

/** Options of `createOpsHandler`. */
export interface OpsHandlerOptions {
  /** The failed set to show and retry. Required. */
  queue: OpsQueue;
  /**
   * Who may see the page and retry alerts. Required: `basicAuth({ username, password })`, or a
   * check of your app's session. `'none'` (anyone who can reach the URL) is accepted only while
   * `NODE_ENV` is exactly `development` or `test` (not when it is unset).
   */
  authorize: OpsAuthorize | 'none';
  /**
   * The key of the CSRF tokens (at least 32 characters). Default: a random key per handler, which
   * is enough for one process; give every instance the same secret when several serve the page
   * (processes behind a load balancer, Workers isolates), so that a token made by one is taken by
   * the others.
   */
  csrfSecret?: string | undefined;
  /** Failed alerts per page. Default 20, at most 200. */
  pageSize?: number | undefined;
  /** How often the page refreshes the counts and the store's health, in ms. Default 5,000. */
  refreshMs?: number | undefined;
  /** Longest wait for each store call, in ms; beyond it the page says the store did not answer. Default 5,000. */
  timeoutMs?: number | undefined;
  /**
   * How long a retry's body may take to arrive whole, in ms, once `authorize` let the request
   * through: a body still incomplete then is answered `408 REQUEST_TIMEOUT` (and, on Node, its
   * connection closed). Default 10,000.
   */
  bodyTimeoutMs?: number | undefined;
  /**
   * True where no worker takes the queue's alerts and a sweep runs them (a receiver with
   * `consume: 'invocation'` on Vercel, Netlify or another function platform): the page then says
   * that a retried alert runs at the next sweep. Default `queue.invocationMode`, which a durable
   * queue sets when such a receiver is attached to it; pass `true` when the page has a queue
   * object of its own (a route that makes its own `createPostgresQueue`).
   */
  invocationMode?: boolean | undefined;
  /**
   * The receiver in this process (`createReceiver({ order: 'per-user' })`): the page then shows
   * how many handler runs it skipped for superseded alerts (`receiver.stats.superseded`, counted
   * since the process started), next to the store's counts.
   */
  receiver?: { readonly stats: { readonly superseded: number } } | undefined;
  /** Where errors of the store and of `authorize` are reported. Default `console`. */
  logger?: Pick<Logger, 'error'> | undefined;
}

/** The handler `createOpsHandler` returns: a Fetch handler, with a Node request listener. */
export interface OpsHandler {
  /** Answers a Web `Request` (Next.js, Hono, Workers, Bun, Deno). Never rejects. */
  (request: Request): Promise<Response>;
  /** The same handler as a method, for `export default { fetch: ops.fetch }`. */
  readonly fetch: (request: Request) => Promise<Response>;
  /**
   * A Node request listener (`http.createServer`, Express, Koa's `ctx.req`/`ctx.res`, Fastify's
   * `request.raw`/`reply.raw`). Resolves once the answer is written. Never rejects.
   */
  readonly node: (req: OpsNodeRequest, res: OpsNodeResponse) => Promise<void>;
}

/**
 * A Node request (an `IncomingMessage`, or Express's request): core's `NodeRequest`, with the
 * members that say where it goes.
 */
export interface OpsNodeRequest extends NodeRequest {
  /** The path and query (`/ops/api/failed?offset=20`). */
  url?: string | undefined;
  /** Express's full path when the handler is mounted with `app.use('/ops', ...)`. */
  originalUrl?: string | undefined;
  /** A body a parser already read (`express.json()`), used when the stream was read to its end. */
  body?: unknown;
  /** False while the body has not all arrived (it is then not drained: `Connection: close`). */
  readonly complete?: boolean | undefined;
}

/** A Node response (a `ServerResponse`): core's `NodeResponse`. */
export type OpsNodeResponse = NodeResponse;
