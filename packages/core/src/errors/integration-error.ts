import { ChurnRiskError } from './churn-risk-error.js';
/** The codes of `IntegrationError`: the receiver is wired into its platform the wrong way. */
export type IntegrationErrorCode = 'INTERNAL_ERROR' | 'RAW_BODY_MISSING';

/**
 * A delivery the receiver could not take because of how it is mounted, not because of the
 * delivery: a body that something read before the receiver (`RAW_BODY_MISSING`), a `waitUntil`
 * that threw (`INTERNAL_ERROR`). Answered `500` so that the sender redelivers, with a message
 * that names the fix and never holds a secret, a signature or the body.
 */
export class IntegrationError extends ChurnRiskError {
  override readonly name = 'IntegrationError';
  declare readonly code: IntegrationErrorCode;
  override readonly status = 500;

  constructor(code: IntegrationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** True for an `IntegrationError`, also across copies of this package. */
export function isIntegrationError(error: unknown): error is IntegrationError {
  return (
    error instanceof IntegrationError ||
    (error instanceof Error &&
      error.name === 'IntegrationError' &&
      typeof (error as { code?: unknown }).code === 'string')
  );
}

/** The `waitUntil` a platform gave could not take the alert's promise: nothing was accepted. */
export function waitUntilFailed(cause: unknown): IntegrationError {
  return new IntegrationError(
    'INTERNAL_ERROR',
    'waitUntil threw, so the alert was not accepted (the sender redelivers it). Pass a bound ' +
      'function: { waitUntil: (promise) => ctx.waitUntil(promise) }.',
    { cause },
  );
}
