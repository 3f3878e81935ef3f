/** Every error code the receiver answers with, SPEC section 4. */
export type WebhookErrorCode =
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'MISSING_SIGNATURE'
  | 'MISSING_TIMESTAMP'
  | 'INVALID_TIMESTAMP'
  | 'INVALID_SIGNATURE'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'INVALID_PAYLOAD'
  | 'OVERLOADED'
  | 'CLOSED'
  | 'HANDLER_FAILED';

/** The single code-to-status table of the receiving side. */
export const WEBHOOK_ERROR_STATUS: Readonly<Record<WebhookErrorCode, number>> = Object.freeze({
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  MISSING_SIGNATURE: 401,
  MISSING_TIMESTAMP: 401,
  INVALID_TIMESTAMP: 401,
  INVALID_SIGNATURE: 401,
  TIMESTAMP_OUT_OF_TOLERANCE: 401,
  INVALID_PAYLOAD: 400,
  OVERLOADED: 503,
  CLOSED: 503,
  HANDLER_FAILED: 500,
});
