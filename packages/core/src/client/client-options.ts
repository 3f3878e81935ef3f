import { refuseUnknownOptions } from '../options/known-options.js';
import { isLoopbackHost } from '../wire/schemas.js';
import { abortableSleep, type Sleep } from './abortable-sleep.js';
import { isClientEnv, resolveBaseUrl } from './base-url.js';
import { resolveClientLog, type ClientLog } from './client-log.js';
import { API_KEY_ENV, BASE_URL_ENV, readEnvVar } from './env.js';
import { RETRY_POLICY } from './retry-policy.js';
import type { ClientOptions, FetchLike, RequestContext, ResponseContext } from './types.js';
import { validationError } from './validate-input.js';

/** Default time-out of one attempt, in ms. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Clock, randomness and sleep of the retry loop: replaceable in tests. */
export interface ClientInternals {
  sleep?: Sleep;
  random?: () => number;
  now?: () => number;
}

/** Client options after defaults and checks. */
export interface ResolvedClientOptions {
  apiKey: string;
  baseUrl: string;
  /** True when the base URL's host is loopback (the local sandbox). */
  baseUrlIsLoopback: boolean;
  timeout: number;
  maxRetries: number;
  fetch: FetchLike;
  onRequest: ((context: RequestContext) => void | Promise<void>) | undefined;
  onResponse: ((context: ResponseContext) => void | Promise<void>) | undefined;
  /** `undefined` when logging is off. */
  log: ClientLog | undefined;
  sleep: Sleep;
  random: () => number;
  now: () => number;
}

const globalFetch: FetchLike = (url, init) => fetch(url, init);

/** `source` names where the URL came from: the `baseUrl` option or `CHURN_RISK_BASE_URL`. */
function checkBaseUrl(baseUrl: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (error) {
    throw validationError(`${source} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw validationError(`${source} must be an absolute http(s) URL`);
  }
  return url;
}

/**
 * The API key: the `apiKey` option when given, else `CHURN_RISK_API_KEY`. The messages name the
 * option and the variable, never a value.
 */
function resolveApiKey(apiKey: unknown): string {
  if (apiKey === undefined) {
    const fromEnv = readEnvVar(API_KEY_ENV);
    if (fromEnv !== undefined) return fromEnv;
    throw validationError(
      `apiKey is required: pass { apiKey } to new ChurnRiskClient() or set the ${API_KEY_ENV} environment variable`,
    );
  }
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw validationError('apiKey must be a non-empty string');
  }
  return apiKey;
}

/**
 * The base URL: the `baseUrl` option, else the `env` option's, else `CHURN_RISK_BASE_URL`, else
 * production. A bad URL's message names where it came from.
 */
function resolveClientBaseUrl(options: ClientOptions): { baseUrl: string; url: URL } {
  if (options.baseUrl === undefined && options.env === undefined) {
    const fromEnv = readEnvVar(BASE_URL_ENV);
    if (fromEnv !== undefined) {
      const baseUrl = resolveBaseUrl(fromEnv, undefined);
      return { baseUrl, url: checkBaseUrl(baseUrl, BASE_URL_ENV) };
    }
  }
  const baseUrl = resolveBaseUrl(options.baseUrl, options.env);
  return { baseUrl, url: checkBaseUrl(baseUrl, 'baseUrl') };
}

/** The options the client knows: any other key is a `TypeError`. */
const CLIENT_OPTION_KEYS = [
  'apiKey',
  'env',
  'baseUrl',
  'timeout',
  'maxRetries',
  'onRequest',
  'onResponse',
  'fetch',
  'logLevel',
  'logger',
] as const satisfies readonly (keyof ClientOptions)[];

/**
 * Applies defaults and checks the options; throws a `VALIDATION_ERROR` naming the bad option (or
 * the environment variable it came from), and a `TypeError` for an option it does not know.
 */
export function resolveClientOptions(
  given: ClientOptions | undefined,
  internals: ClientInternals = {},
): ResolvedClientOptions {
  // A JavaScript caller may pass anything.
  const raw: unknown = given;
  if (raw !== undefined && (typeof raw !== 'object' || raw === null)) {
    throw validationError('options must be an object');
  }
  const options: ClientOptions = given ?? {};
  refuseUnknownOptions('ChurnRiskClient', options, CLIENT_OPTION_KEYS, {
    retries: 'the number of retries is called maxRetries',
    timeoutMs: 'the time-out is called timeout (milliseconds)',
  });
  const apiKey = resolveApiKey(options.apiKey);
  if (options.env !== undefined && !isClientEnv(options.env)) {
    throw validationError('env must be "production" or "staging"');
  }
  if (options.baseUrl !== undefined && typeof options.baseUrl !== 'string') {
    throw validationError('baseUrl must be a string');
  }
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw validationError('timeout must be a positive number of milliseconds');
  }
  const maxRetries = options.maxRetries ?? RETRY_POLICY.defaultMaxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw validationError('maxRetries must be a whole number >= 0');
  }
  const { baseUrl, url } = resolveClientBaseUrl(options);
  return {
    apiKey,
    baseUrl,
    baseUrlIsLoopback: isLoopbackHost(url.hostname),
    timeout,
    maxRetries,
    fetch: options.fetch ?? globalFetch,
    onRequest: options.onRequest,
    onResponse: options.onResponse,
    log: resolveClientLog(options.logLevel, options.logger),
    sleep: internals.sleep ?? abortableSleep,
    random: internals.random ?? Math.random,
    now: internals.now ?? Date.now,
  };
}
