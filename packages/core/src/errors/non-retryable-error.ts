import { ChurnRiskError } from './churn-risk-error.js';
/**
 * Thrown (or rejected with) by a handler whose failure cannot go away by trying again: a user the
 * service does not know, a record that was deleted, a request the CRM refuses for what it is. The
 * alert's tries end at once: it fails, and `onError` gets this error once, in memory and
 * in every durable queue alike. `retryable` is `false`, as on the client's own `ServiceError`s that
 * no retry can mend. `new NonRetryableError(message, { cause })`: `cause` keeps the underlying error.
 *
 * @example
 * receiver.on('churn_risk_alert', async (alert) => {
 *   const account = await crm.find(alert.userId);
 *   if (account === undefined) throw new NonRetryableError(`No CRM account for ${alert.userId}`);
 *   await crm.createTask(account, alert.recommendation);
 * });
 */
export class NonRetryableError extends ChurnRiskError {
  override readonly name = 'NonRetryableError';
  override readonly code = 'NON_RETRYABLE' as const;
  /** Always `false`: what the default `retries.shouldRetry` reads on any error. */
  readonly retryable = false as const;
}

/** True for a `NonRetryableError`, also across copies of this package. */
export function isNonRetryableError(error: unknown): error is NonRetryableError {
  return (
    error instanceof NonRetryableError ||
    (error instanceof Error &&
      error.name === 'NonRetryableError' &&
      (error as { code?: unknown }).code === 'NON_RETRYABLE')
  );
}

/**
 * The default `retries.shouldRetry`: `false` for a `NonRetryableError` and for any error whose
 * `retryable` property is `false` (the client's `ServiceError`s that its own retries could not
 * mend, such as `NOT_FOUND` or `VALIDATION_ERROR`), `true` for anything else.
 *
 * @example
 * createReceiver({ secret, retries: { shouldRetry: (error) => !(error instanceof TypeError) && defaultShouldRetry(error) } });
 */
export function defaultShouldRetry(error: unknown): boolean {
  // A NonRetryableError's `retryable` is false too.
  return !(
    typeof error === 'object' &&
    error !== null &&
    (error as { retryable?: unknown }).retryable === false
  );
}
