import type { ErrorCode } from './service-error.js';

/** The REST API's status-to-code table, used when an error body carries no code. */
export const STATUS_CODES: Readonly<Record<number, ErrorCode>> = Object.freeze({
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMITED',
});

/**
 * The code of an HTTP error status: the table's, `SERVER_ERROR` for any 5xx, and `HTTP_ERROR` for
 * a status the contract does not name (e.g. 409 or 418).
 */
export function codeForStatus(status: number): ErrorCode {
  const code = STATUS_CODES[status];
  if (code !== undefined) return code;
  return status >= 500 && status <= 599 ? 'SERVER_ERROR' : 'HTTP_ERROR';
}
