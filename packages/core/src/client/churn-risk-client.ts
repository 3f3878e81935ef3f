import { createEventBatcher, type BatcherOptions, type EventBatcher } from '../batcher/index.js';
import {
  acceptedResponseSchema,
  AT_RISK_DEFAULTS,
  atRiskQuerySchema,
  atRiskResultSchema,
  bulkEventItemSchema,
  isAllowedWebhookUrl,
  MAX_BULK_EVENTS,
  riskScoreSchema,
  userTraitsSchema,
  watchedUserSchema,
  watchOptionsSchema,
} from '../wire/schemas.js';
import { walkAtRiskPages } from './at-risk-pages.js';
import {
  resolveClientOptions,
  type ClientInternals,
  type ResolvedClientOptions,
} from './client-options.js';
import { sendRequest } from './http-transport.js';
import { pageSizeSchema, trackBulkItemsSchema } from './input-schemas.js';
import { parseResponse } from './parse-response.js';
import { atRiskQuery, userPath } from './request-parts.js';
import type {
  AtRiskAllOptions,
  AtRiskOptions,
  AtRiskResult,
  AtRiskUser,
  BulkEventItem,
  CallOptions,
  ClientOptions,
  RiskScore,
  TrackResult,
  UserTraits,
  WatchedUser,
  WatchOptions,
  WriteOptions,
} from './types.js';
import { parseInput, validationError } from './validate-input.js';

/** An `Idempotency-Key` header value: 1 to 4096 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,4096}$/;

/** The call's `idempotencyKey`, checked; undefined for a fresh one per call. */
function keyOf(options: WriteOptions): string | undefined {
  const key = options.idempotencyKey;
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw validationError(
      'Invalid argument: options.idempotencyKey must be 1 to 4096 visible ASCII characters',
      [{ path: 'options.idempotencyKey', message: 'must be 1 to 4096 visible ASCII characters' }],
    );
  }
  return key;
}

/**
 * The churn-risk REST API client. Every method validates its input before sending
 * (a `VALIDATION_ERROR` means nothing was sent), retries transient failures, validates the answer
 * and rejects with a `ServiceError`. Every method takes `{ signal }`.
 *
 * @example
 * // CHURN_RISK_API_KEY (and optionally CHURN_RISK_BASE_URL) set in the environment:
 * const client = new ChurnRiskClient();
 * // or explicitly, which wins over the environment:
 * const sandbox = new ChurnRiskClient({ apiKey: 'sk_test_...', baseUrl: 'http://127.0.0.1:4010' });
 */
export class ChurnRiskClient {
  readonly #options: ResolvedClientOptions;

  /**
   * @param options see `ClientOptions`. Where `process.env` exists, a missing `apiKey` comes from
   * `CHURN_RISK_API_KEY`, and a missing `baseUrl` (when `env` is not given either) from
   * `CHURN_RISK_BASE_URL`; an option given wins over the variable. A bad option, or no API key
   * from either, throws a `ServiceError` with code `VALIDATION_ERROR` whose message names the
   * option or variable (never its value).
   * @param internals clock, randomness and sleep of the retry loop, for tests only (not a stable API).
   */
  constructor(options: ClientOptions = {}, internals?: ClientInternals) {
    this.#options = resolveClientOptions(options, internals);
  }

  /** The base URL requests go to. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** Merges `traits` into the user's stored traits (`POST /v1/users/{userId}/traits`, 204). */
  async identify(userId: string, traits: UserTraits, options: WriteOptions = {}): Promise<void> {
    const path = userPath(userId, 'traits');
    const body = parseInput(userTraitsSchema, traits, 'traits');
    const idempotencyKey = keyOf(options);
    await sendRequest(this.#options, {
      method: 'POST',
      path,
      body,
      idempotencyKey,
      signal: options.signal,
    });
  }

  /** Records one event (`POST /v1/events`, 202). */
  async track(item: BulkEventItem, options: WriteOptions = {}): Promise<TrackResult> {
    const body = parseInput(bulkEventItemSchema, item, 'item');
    const idempotencyKey = keyOf(options);
    const path = '/v1/events';
    const response = await sendRequest(this.#options, {
      method: 'POST',
      path,
      body,
      idempotencyKey,
      signal: options.signal,
    });
    return { accepted: parseResponse(acceptedResponseSchema, response, `POST ${path}`).accepted };
  }

  /**
   * Records many events (`POST /v1/events/bulk`), in requests of at most 500, one after another.
   * Resolves with the total accepted. If a request fails, the requests before it stay accepted.
   */
  async trackBulk(
    items: readonly BulkEventItem[],
    options: WriteOptions = {},
  ): Promise<TrackResult> {
    const events = parseInput(trackBulkItemsSchema, items, 'items');
    const key = keyOf(options);
    let accepted = 0;
    for (let start = 0; start < events.length; start += MAX_BULK_EVENTS) {
      const chunk = events.slice(start, start + MAX_BULK_EVENTS);
      const part = start / MAX_BULK_EVENTS;
      const idempotencyKey = key === undefined || part === 0 ? key : `${key}/${String(part)}`;
      accepted += await this.#postBulk(chunk, idempotencyKey, options.signal);
    }
    return { accepted };
  }

  /** The user's churn risk (`GET /v1/users/{userId}/risk`); `NOT_FOUND` for an unknown user. */
  async getRiskScore(userId: string, options: CallOptions = {}): Promise<RiskScore> {
    const path = userPath(userId, 'risk');
    const response = await sendRequest(this.#options, {
      method: 'GET',
      path,
      signal: options.signal,
    });
    return parseResponse(riskScoreSchema, response, `GET /v1/users/{userId}/risk`);
  }

  /** One page of users whose score is at least `threshold`, highest first (`GET /v1/at-risk`). */
  async getAtRiskUsers(options: AtRiskOptions = {}): Promise<AtRiskResult> {
    const params = atRiskQuery(options);
    const path = '/v1/at-risk';
    const response = await sendRequest(this.#options, {
      method: 'GET',
      path,
      query: params,
      signal: options.signal,
    });
    return parseResponse(atRiskResultSchema, response, `GET ${path}`);
  }

  /**
   * Every at-risk user, fetching page after page of `pageSize` (default 100) as you iterate:
   * `for await (const user of client.getAllAtRiskUsers({ threshold: 0.7 }))`.
   */
  getAllAtRiskUsers(options: AtRiskAllOptions = {}): AsyncGenerator<AtRiskUser, void, undefined> {
    // Validated at the call, not at the first page: a bad option throws right here.
    const pageSize = parseInput(
      pageSizeSchema,
      options.pageSize ?? AT_RISK_DEFAULTS.pageSize,
      'options.pageSize',
    );
    parseInput(atRiskQuerySchema, { threshold: options.threshold, plan: options.plan }, 'options');
    return walkAtRiskPages((page) => this.getAtRiskUsers(page), {
      threshold: options.threshold,
      plan: options.plan,
      pageSize,
      signal: options.signal,
    });
  }

  /** Creates or replaces the user's watch (`PUT /v1/users/{userId}/watch`). */
  async watch(
    userId: string,
    watch: WatchOptions,
    options: WriteOptions = {},
  ): Promise<WatchedUser> {
    const path = userPath(userId, 'watch');
    const body = parseInput(watchOptionsSchema, watch, 'watch');
    const idempotencyKey = keyOf(options);
    if (!isAllowedWebhookUrl(body.webhook, this.#options.baseUrlIsLoopback)) {
      throw validationError(
        'Invalid argument: watch.webhook must be an https:// URL (http:// only to a loopback host while the client talks to a loopback service)',
        [{ path: 'watch.webhook', message: 'must be an https:// URL' }],
      );
    }
    const response = await sendRequest(this.#options, {
      method: 'PUT',
      path,
      body,
      idempotencyKey,
      signal: options.signal,
    });
    return parseResponse(watchedUserSchema, response, 'PUT /v1/users/{userId}/watch');
  }

  /** Removes the user's watch (`DELETE /v1/users/{userId}/watch`); `NOT_FOUND` when there is none. */
  async unwatch(userId: string, options: CallOptions = {}): Promise<void> {
    const path = userPath(userId, 'watch');
    await sendRequest(this.#options, { method: 'DELETE', path, signal: options.signal });
  }

  /** An event batcher that sends through this client. */
  createBatcher(options: BatcherOptions = {}): EventBatcher {
    return createEventBatcher(
      (events, idempotencyKey) => this.#postBulk(events, idempotencyKey),
      options,
    );
  }

  async #postBulk(
    events: readonly BulkEventItem[],
    idempotencyKey: string | undefined,
    signal?: AbortSignal,
  ): Promise<number> {
    const path = '/v1/events/bulk';
    const response = await sendRequest(this.#options, {
      method: 'POST',
      path,
      body: { events },
      idempotencyKey,
      signal,
    });
    return parseResponse(acceptedResponseSchema, response, `POST ${path}`).accepted;
  }
}
