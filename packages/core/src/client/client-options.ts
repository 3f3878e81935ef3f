import { isLoopbackHost } from '../wire/schemas.js';
import { abortableSleep, type Sleep } from './abortable-sleep.js';
import { isClientEnv, resolveBaseUrl } from './base-url.js';
import { resolveClientLog, type ClientLog } from './client-log.js';
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

function checkBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (error) {
    throw validationError('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw validationError('baseUrl must be an absolute http(s) URL');
  }
  return url;
}

/** Applies defaults and checks the options; throws a `VALIDATION_ERROR` naming the bad option. */
export function resolveClientOptions(
  options: ClientOptions,
  internals: ClientInternals = {},
): ResolvedClientOptions {
  if (typeof options !== 'object' || typeof options.apiKey !== 'string' || options.apiKey === '') {
    throw validationError('apiKey is required (a non-empty string)');
  }
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
  const baseUrl = resolveBaseUrl(options.baseUrl, options.env);
  const url = checkBaseUrl(baseUrl);
  return {
    apiKey: options.apiKey,
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
