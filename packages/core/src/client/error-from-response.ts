import { errorBodySchema } from '../wire/schemas.js';
import { redact } from './redact.js';
import { isRetryableStatus } from './retry-policy.js';
import { ServiceError } from './service-error.js';
import { codeForStatus } from './status-codes.js';

/** A response as the transport read it. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The `x-request-id` header, if any. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? undefined;
}

/**
 * The `ServiceError` of a non-2xx response: the body's `code`, `message` and `details` when it is
 * the service's error body, else the code of the status table. Retryable by status alone.
 */
export function errorFromResponse(
  response: RawResponse,
  request: { method: string; path: string },
  apiKey: string,
): ServiceError {
  const { status } = response;
  const body = errorBodySchema.safeParse(parseJson(response.text));
  const fallback = `${request.method} ${request.path} failed with status ${status}`;
  return new ServiceError({
    status,
    code: body.success ? body.data.error.code : codeForStatus(status),
    message: redact(body.success ? body.data.error.message : fallback, apiKey),
    requestId: requestIdOf(response.headers),
    retryable: isRetryableStatus(status),
    details: body.success ? body.data.error.details : undefined,
  });
}
