import type { ResolvedClientOptions } from './client-options.js';
import type { AttemptRecord } from './client-log.js';
import { errorFromResponse, requestIdOf, type RawResponse } from './error-from-response.js';
import { retryDelay } from './retry-policy.js';
import { abortedError, sendAttempt } from './send-attempt.js';
import { ServiceError } from './service-error.js';
import type { RequestContext } from './types.js';
import { USER_AGENT } from '../version.js';

/** One API call, before retries. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path from the base URL, starting with `/v1/`, its parts already percent-encoded. */
  path: string;
  query?: URLSearchParams | undefined;
  /** A JSON body; its presence adds `content-type` and `idempotency-key`. */
  body?: unknown;
  /** The idempotency key of this call; default a fresh UUID. */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** A successful (2xx) response. */
export type ApiResponse = RawResponse;

function baseHeaders(idempotencyKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
  if (idempotencyKey !== undefined) {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = idempotencyKey;
  }
  return headers;
}

/** A prepared call: what stays the same on every attempt. */
interface PreparedCall {
  request: ApiRequest;
  label: string;
  url: string;
  bodyText: string | undefined;
  idempotencyKey: string | undefined;
}

type AttemptResult = (
  { response: RawResponse } | { error: ServiceError; retryAfter: string | null }
) & { ms: number };

async function runAttempt(
  options: ResolvedClientOptions,
  call: PreparedCall,
  attempt: number,
): Promise<AttemptResult> {
  const { request, url, label } = call;
  const context: RequestContext = {
    method: request.method,
    url,
    headers: baseHeaders(call.idempotencyKey),
  };
  if (call.bodyText !== undefined) context.body = request.body;
  await options.onRequest?.(context);
  const headers = new Headers(context.headers);
  headers.set('authorization', `Bearer ${options.apiKey}`);
  const init: RequestInit = { method: request.method, headers };
  if (call.bodyText !== undefined) init.body = call.bodyText;

  const started = performance.now();
  let response: RawResponse;
  try {
    response = await sendAttempt({
      url,
      label,
      init,
      timeout: options.timeout,
      signal: request.signal,
      fetch: options.fetch,
    });
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    if (error instanceof ServiceError) return { error, retryAfter: null, ms };
    throw error;
  }
  const durationMs = performance.now() - started;
  const ms = Math.round(durationMs);
  await options.onResponse?.({
    method: request.method,
    url,
    status: response.status,
    durationMs,
    attempt,
  });
  if (response.status >= 200 && response.status <= 299) return { response, ms };
  return {
    error: errorFromResponse(response, request, options.apiKey),
    retryAfter: response.headers.get('retry-after'),
    ms,
  };
}

const msSince = (started: number): number => Math.round(performance.now() - started);

/** What the log says of one attempt: never a header, a query string or a body. */
function attemptRecord(request: ApiRequest, result: AttemptResult, attempt: number): AttemptRecord {
  const { method, path } = request;
  if ('response' in result) {
    const { status, headers } = result.response;
    const requestId = requestIdOf(headers);
    return { method, path, status, code: undefined, ms: result.ms, attempt, requestId };
  }
  const { status, code, requestId } = result.error;
  return { method, path, status, code, ms: result.ms, attempt, requestId };
}

/**
 * Sends `request` with the client's retry policy: at most `maxRetries` retries of
 * retryable failures, each attempt with its own time-out and the same idempotency key, `onRequest`
 * before and `onResponse` after each attempt, an abortable wait between attempts.
 * Resolves with the 2xx response; rejects with a `ServiceError` (or what a hook threw).
 */
export async function sendRequest(
  options: ResolvedClientOptions,
  request: ApiRequest,
): Promise<ApiResponse> {
  const query = request.query?.toString() ?? '';
  const hasBody = request.body !== undefined;
  const call: PreparedCall = {
    request,
    label: `${request.method} ${request.path}`,
    url: `${options.baseUrl}${request.path}${query === '' ? '' : `?${query}`}`,
    bodyText: hasBody ? JSON.stringify(request.body) : undefined,
    idempotencyKey: hasBody ? (request.idempotencyKey ?? crypto.randomUUID()) : undefined,
  };
  const { log } = options;
  const started = log === undefined ? 0 : performance.now();
  for (let attempt = 0; ; attempt++) {
    if (request.signal?.aborted) throw abortedError(call.label, request.signal);
    const result = await runAttempt(options, call, attempt);
    // One small object per HTTP attempt, next to the request itself: not worth a branch.
    const record = attemptRecord(request, result, attempt);
    log?.attempt(record);
    if ('response' in result) {
      const { status } = result.response;
      log?.succeeded(request.method, request.path, status, msSince(started), attempt + 1);
      return result.response;
    }
    const { error, retryAfter } = result;
    if (!error.retryable || attempt >= options.maxRetries) {
      log?.failed(record);
      throw error;
    }
    const delay = retryDelay({
      retry: attempt,
      retryAfter,
      now: options.now(),
      random: options.random,
    });
    log?.retry(record, delay);
    try {
      await options.sleep(delay, request.signal);
    } catch {
      throw abortedError(call.label, request.signal);
    }
  }
}
