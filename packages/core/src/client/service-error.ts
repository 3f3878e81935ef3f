import { ChurnRiskError } from '../errors/churn-risk-error.js';
/**
 * Every code a `ServiceError` carries. The service may send codes of its own in an error body;
 * they pass through unchanged, hence `(string & {})`.
 */
export type ErrorCode =
  | 'ABORTED'
  | 'TIMEOUT'
  | 'NETWORK_ERROR'
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'PAYLOAD_TOO_LARGE'
  | 'QUEUE_OVERFLOW'
  | 'HTTP_ERROR'
  | (string & {});

/** What a `ServiceError` is made of. */
export interface ServiceErrorInit {
  code: ErrorCode;
  message: string;
  status?: number | undefined;
  requestId?: string | undefined;
  retryable?: boolean | undefined;
  details?: readonly unknown[] | undefined;
  dropped?: number | undefined;
  cause?: unknown;
}

/**
 * A failed call of the churn-risk API, or a batcher failure. `status` is the HTTP status when a
 * response arrived; `requestId` is its `x-request-id` header; `retryable` says whether the client's
 * retry policy treats it as transient; `dropped` counts the events a batcher dropped.
 * The message never contains the API key.
 */
export class ServiceError extends ChurnRiskError {
  override readonly name = 'ServiceError';
  declare readonly code: ErrorCode;
  declare readonly status?: number;
  readonly requestId?: string;
  readonly retryable: boolean;
  readonly details?: readonly unknown[];
  readonly dropped?: number;

  constructor(init: ServiceErrorInit) {
    super(init.message, 'cause' in init ? { cause: init.cause } : undefined);
    this.code = init.code;
    this.retryable = init.retryable ?? false;
    if (init.status !== undefined) this.status = init.status;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    if (init.details !== undefined) this.details = init.details;
    if (init.dropped !== undefined) this.dropped = init.dropped;
  }
}

/** True for a `ServiceError`, also one from another copy of this package. */
export function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof ServiceError ||
    (error instanceof Error &&
      error.name === 'ServiceError' &&
      typeof (error as { code?: unknown }).code === 'string')
  );
}
