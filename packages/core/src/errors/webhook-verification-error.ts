import { ChurnRiskError } from './churn-risk-error.js';
import { WEBHOOK_ERROR_STATUS, type VerificationErrorCode } from './webhook-error-status.js';

/**
 * A delivery whose signature or timestamp does not verify: always a `401` (`MISSING_SIGNATURE`,
 * `MISSING_TIMESTAMP`, `INVALID_TIMESTAMP`, `INVALID_SIGNATURE`, `TIMESTAMP_OUT_OF_TOLERANCE`).
 * The message is safe to send back to the caller: it never contains a secret or
 * an expected signature. `405`, `413` and `400` are a `DeliveryRejectedError`.
 */
export class WebhookVerificationError extends ChurnRiskError {
  override readonly name = 'WebhookVerificationError';
  declare readonly code: VerificationErrorCode;
  declare readonly status: number;

  constructor(code: VerificationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = WEBHOOK_ERROR_STATUS[code];
  }
}

/** True for a `WebhookVerificationError`, also across copies of this package. */
export function isWebhookVerificationError(error: unknown): error is WebhookVerificationError {
  return (
    error instanceof WebhookVerificationError ||
    (error instanceof Error &&
      error.name === 'WebhookVerificationError' &&
      typeof (error as { code?: unknown }).code === 'string' &&
      typeof (error as { status?: unknown }).status === 'number')
  );
}
