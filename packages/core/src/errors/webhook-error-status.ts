/** The `401` codes: the delivery's signature or timestamp does not verify (`WebhookVerificationError`). */
export type VerificationErrorCode =
  | 'MISSING_SIGNATURE'
  | 'MISSING_TIMESTAMP'
  | 'INVALID_TIMESTAMP'
  | 'INVALID_SIGNATURE'
  | 'TIMESTAMP_OUT_OF_TOLERANCE';

/**
 * The `405`, `413`, `408` and `400` codes: the delivery is refused for what it is, or for a body
 * not complete within `bodyTimeoutMs` (`DeliveryRejectedError`).
 */
export type DeliveryRejectedCode =
  'METHOD_NOT_ALLOWED' | 'PAYLOAD_TOO_LARGE' | 'REQUEST_TIMEOUT' | 'INVALID_PAYLOAD';

/** Every error code the receiver answers with. */
export type WebhookErrorCode =
  VerificationErrorCode | DeliveryRejectedCode | 'OVERLOADED' | 'CLOSED' | 'HANDLER_FAILED';

/** The single code-to-status table of the receiving side. */
export const WEBHOOK_ERROR_STATUS: Readonly<Record<WebhookErrorCode, number>> = Object.freeze({
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
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
