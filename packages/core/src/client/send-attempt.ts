import type { RawResponse } from './error-from-response.js';
import { isRetryableCode } from './retry-policy.js';
import { ServiceError, type ErrorCode } from './service-error.js';
import type { FetchLike } from './types.js';

/** One HTTP attempt. */
export interface AttemptRequest {
  url: string;
  /** What error messages name: method and path, never the full URL's credentials. */
  label: string;
  init: Omit<RequestInit, 'signal'>;
  timeout: number;
  signal: AbortSignal | undefined;
  fetch: FetchLike;
}

function failure(code: ErrorCode, message: string, cause: unknown): ServiceError {
  return new ServiceError({ code, message, cause, retryable: isRetryableCode(code) });
}

/** The `ABORTED` error of a call whose signal fired. */
export function abortedError(label: string, signal: AbortSignal | undefined): ServiceError {
  return failure('ABORTED', `${label} was aborted`, signal?.reason);
}

/**
 * Sends one attempt with its own time-out and reads the whole body. Without a response it throws
 * `ABORTED` (the caller's signal), `TIMEOUT` (the time-out passed) or `NETWORK_ERROR`.
 */
export async function sendAttempt(request: AttemptRequest): Promise<RawResponse> {
  const { signal, timeout, label } = request;
  if (signal?.aborted) throw abortedError(label, signal);
  const controller = new AbortController();
  const timeoutReason = new Error(`time-out of ${timeout} ms passed`);
  const onAbort = (): void => {
    controller.abort(signal?.reason);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(timeoutReason);
  }, timeout);
  (timer as { unref?: () => void }).unref?.();
  try {
    const response = await request.fetch(request.url, {
      ...request.init,
      signal: controller.signal,
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (signal?.aborted) throw abortedError(label, signal);
    if (controller.signal.reason === timeoutReason)
      throw failure('TIMEOUT', `${label} timed out after ${timeout} ms`, error);
    throw failure('NETWORK_ERROR', `${label} failed: could not reach the service`, error);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
