import { WEBHOOK_ERROR_STATUS, type WebhookErrorCode } from './webhook-error-status.js';

/**
 * A delivery the receiver refuses. `code` and `status` follow SPEC section 4's table. The message
 * is safe to send back to the caller: it never contains a secret or an expected signature.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookErrorCode;
  readonly status: number;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
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
