import { ChurnRiskError } from './churn-risk-error.js';
import { WEBHOOK_ERROR_STATUS, type DeliveryRejectedCode } from './webhook-error-status.js';

/**
 * A delivery the receiver refuses for what it is, not for its signature: a method other than POST
 * (`405 METHOD_NOT_ALLOWED`), a body over `maxBodyBytes` (`413 PAYLOAD_TOO_LARGE`), a body not
 * complete within `bodyTimeoutMs` (`408 REQUEST_TIMEOUT`), or a verified
 * body that is not a valid payload (`400 INVALID_PAYLOAD`). `code` and `status` are the
 * answer's; the message is safe to send back (never a secret, a signature or the body).
 * A `401` is a `WebhookVerificationError`.
 *
 * @example
 * try {
 *   parseEvent(bytes);
 * } catch (error) {
 *   if (isDeliveryRejectedError(error)) console.warn(error.code, error.message); // INVALID_PAYLOAD
 * }
 */
export class DeliveryRejectedError extends ChurnRiskError {
  override readonly name = 'DeliveryRejectedError';
  declare readonly code: DeliveryRejectedCode;
  declare readonly status: number;

  constructor(code: DeliveryRejectedCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = WEBHOOK_ERROR_STATUS[code];
  }
}

/** True for a `DeliveryRejectedError`, also across copies of this package. */
export function isDeliveryRejectedError(error: unknown): error is DeliveryRejectedError {
  return (
    error instanceof DeliveryRejectedError ||
    (error instanceof Error &&
      error.name === 'DeliveryRejectedError' &&
      typeof (error as { code?: unknown }).code === 'string' &&
      typeof (error as { status?: unknown }).status === 'number')
  );
}

/** The 413 refusal of a body over `maxBytes`, for every reader of a body (and adapters that read it). */
export function payloadTooLarge(maxBytes: number): DeliveryRejectedError {
  return new DeliveryRejectedError(
    'PAYLOAD_TOO_LARGE',
    `The body is larger than the limit of ${String(maxBytes)} bytes.`,
  );
}

/**
 * The 408 refusal of a body not complete within `timeoutMs` (a sender that stalls, or a
 * `Content-Length` larger than what it sends), for every reader of a body.
 */
export function requestTimeout(timeoutMs: number): DeliveryRejectedError {
  return new DeliveryRejectedError(
    'REQUEST_TIMEOUT',
    `The body was not complete within ${String(timeoutMs)} ms.`,
  );
}
