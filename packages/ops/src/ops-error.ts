import { ChurnRiskError } from '@churn-risk/core';

/** What went wrong with a request to the operations page or its JSON API. */
export type OpsErrorCode =
  | 'UNAUTHORIZED'
  | 'AUTHORIZE_FAILED'
  | 'CROSS_SITE'
  | 'CSRF_TOKEN_INVALID'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'BAD_REQUEST'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'BODY_ALREADY_READ'
  | 'STORE_UNAVAILABLE';

/**
 * A refused or failed request to the operations handler, with the HTTP `status` it is answered
 * with. Its message names the fix where there is one, and never holds a token, a credential, a
 * body or a store's connection details.
 */
export class OpsError extends ChurnRiskError {
  override readonly name = 'OpsError';
  declare readonly code: OpsErrorCode;
  declare readonly status: number;

  constructor(code: OpsErrorCode, status: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = status;
  }
}

/** True for an `OpsError`, also across copies of this package. */
export function isOpsError(error: unknown): error is OpsError {
  return (
    error instanceof OpsError ||
    (error instanceof Error &&
      error.name === 'OpsError' &&
      typeof (error as { code?: unknown }).code === 'string' &&
      typeof (error as { status?: unknown }).status === 'number')
  );
}
