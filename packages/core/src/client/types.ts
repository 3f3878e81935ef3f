/**
 * The public types of the API client, under the names of the service's documentation. The wire
 * shapes come from the zod schemas in `wire/schemas.ts`, the one definition shared with the sandbox.
 */
import type { z } from 'zod';
import type { Logger, LogThreshold } from '../observability/logger.js';
import type {
  atRiskResultSchema,
  atRiskUserSchema,
  bulkEventItemSchema,
  eventPropertiesSchema,
  riskScoreSchema,
  userTraitsSchema,
  watchedUserSchema,
} from '../wire/schemas.js';

/** Options of every call. */
export interface CallOptions {
  /** Aborts the call: in flight, between retries or between pages. */
  signal?: AbortSignal | undefined;
}

/** Options of one call that writes (`identify`, `track`, `trackBulk`, `watch`). */
export interface WriteOptions extends CallOptions {
  /**
   * The call's `Idempotency-Key`: the service answers a repeat of the key with the first answer
   * and does not write again. Default: a fresh UUID per call (the same in every retry of the
   * call). Pass a key that is stable across runs, such as a handler's `context.idempotencyKey`,
   * so that a run after a takeover or a retry does not write twice. 1 to 4096 visible ASCII
   * characters. `trackBulk` sends requests of 500 events: the second gets `<key>/1`, and so on.
   */
  idempotencyKey?: string | undefined;
}

export type { RiskTier } from '../payload/alert-schema.js';

/** Traits of a user, merged into the traits the service stores. Values are scalars. */
export type UserTraits = z.input<typeof userTraitsSchema>;

/** Properties of an event: string keys, scalar values. */
export type EventProperties = z.input<typeof eventPropertiesSchema>;

/** One event: `userId`, `event` name, optional `properties` and ISO 8601 `timestamp`. */
export type BulkEventItem = z.input<typeof bulkEventItemSchema>;

/** A user's churn risk. Fields a newer service adds are kept. */
export type RiskScore = z.infer<typeof riskScoreSchema>;

/** A user in the at-risk list: the same fields as `RiskScore`. */
export type AtRiskUser = z.infer<typeof atRiskUserSchema>;

/** One page of at-risk users. */
export type AtRiskResult = z.infer<typeof atRiskResultSchema>;

/** A watch as the service stores it. */
export type WatchedUser = z.infer<typeof watchedUserSchema>;

/**
 * A positive whole number then `d` (days) or `h` (hours), e.g. `"24h"`. The type admits whole
 * numbers only (`"1.5h"` is a type error); the sign and leading zeros are checked at run time
 * against `^[1-9]\d*[dh]$`.
 */
export type CooldownString = `${bigint}d` | `${bigint}h`;

/** The body of `watch`. */
export interface WatchOptions {
  /** 0 to 1: an alert fires when the score rises to at least this. */
  threshold: number;
  /** An `https://` URL (`http://` only to a loopback host when the client talks to a loopback service). */
  webhook: string;
  /** How long the watch stays quiet after an alert. */
  cooldown: CooldownString;
}

/** The query of `getAtRiskUsers`. */
export interface AtRiskOptions extends CallOptions {
  /** Lowest score listed, 0 to 1; default 0.5. */
  threshold?: number | undefined;
  /** Only users on this plan. */
  plan?: string | undefined;
  /** Page size, 1 to 200; default 50. */
  limit?: number | undefined;
  /** Users to skip, >= 0; default 0. */
  offset?: number | undefined;
}

/** The query of `getAllAtRiskUsers`. */
export interface AtRiskAllOptions extends CallOptions {
  /** Lowest score listed, 0 to 1; default 0.5 (the service's default). */
  threshold?: number | undefined;
  /** Only users on this plan. */
  plan?: string | undefined;
  /** Users per request, 1 to 200; default 100. */
  pageSize?: number | undefined;
}

/** The answer of `track` and `trackBulk`. */
export interface TrackResult {
  /** Events the service accepted. */
  accepted: number;
}

/** What `onRequest` sees before each attempt. */
export interface RequestContext {
  method: string;
  url: string;
  /**
   * Lower-case header names; add or change entries to change the request. `authorization` is not
   * in here (so a logging hook cannot leak the key); the client sets it after the hook.
   */
  headers: Record<string, string>;
  /** The JSON body, already validated. */
  body?: unknown;
}

/** What `onResponse` sees after each HTTP response. */
export interface ResponseContext {
  method: string;
  url: string;
  status: number;
  /** From sending the request to having read the response body. */
  durationMs: number;
  /** 0 for the first attempt, 1 for the first retry, ... */
  attempt: number;
}

/** A `fetch` as the client calls it. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * Options of `new ChurnRiskClient(options)`. Every option may be left out; where `process.env`
 * exists (Node.js, Bun, Deno with `--allow-env`), `apiKey` and the base URL then come from the
 * environment. An option given always wins over the environment.
 */
export interface ClientOptions {
  /**
   * The API key, sent as `Authorization: Bearer <apiKey>`. Never appears in an error message.
   * Default: the `CHURN_RISK_API_KEY` environment variable; without either, the constructor
   * throws a `VALIDATION_ERROR` naming `CHURN_RISK_API_KEY`.
   */
  apiKey?: string | undefined;
  /**
   * `production` or `staging`; ignored when `baseUrl` is given. When neither `env` nor `baseUrl`
   * is given: the `CHURN_RISK_BASE_URL` environment variable, else production.
   */
  env?: 'production' | 'staging' | undefined;
  /**
   * Overrides the base address, e.g. the local sandbox's `http://127.0.0.1:4010`. Default: the
   * `CHURN_RISK_BASE_URL` environment variable when `env` is not given either.
   */
  baseUrl?: string | undefined;
  /** Time-out of each attempt in ms; default 15000. */
  timeout?: number | undefined;
  /** Retries of a failed call; default 3 (at most 4 attempts). */
  maxRetries?: number | undefined;
  /** Called before each attempt; may change `headers`. */
  onRequest?: ((context: RequestContext) => void | Promise<void>) | undefined;
  /** Called after each HTTP response. */
  onResponse?: ((context: ResponseContext) => void | Promise<void>) | undefined;
  /** The `fetch` to use; default the global one. */
  fetch?: FetchLike | undefined;
  /**
   * What the client logs: `'off'` (default), `'debug'` (one line per attempt: method, path,
   * status, ms, attempt, request id), `'info'` (one line per successful call), `'warn'` (retries),
   * `'error'` (calls that failed). Default: the `CHURN_RISK_LOG` environment variable, else
   * `'off'`. Never logs the API key, a header or a body.
   *
   * @example
   * // or run the app with CHURN_RISK_LOG=debug
   * const client = new ChurnRiskClient({ apiKey, logLevel: 'debug' });
   */
  logLevel?: LogThreshold | undefined;
  /**
   * Where the lines go: a pino-style logger (`(fields, message)`), e.g. a pino instance. Default:
   * one plain `[churn-risk] ...` line on the console method of the level.
   */
  logger?: Logger | undefined;
}
