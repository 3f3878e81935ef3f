import { ServiceError } from '../client/service-error.js';
import { ChurnRiskError } from './churn-risk-error.js';
import { DeliveryRejectedError } from './delivery-rejected-error.js';
import {
  AlertCutOffError,
  AlertStalledError,
  HandlersFailedError,
} from './handlers-failed-error.js';
import { IntegrationError } from './integration-error.js';
import { NonRetryableError } from './non-retryable-error.js';
import { ReceiverUnavailableError } from './receiver-unavailable-error.js';
import { SyncHandlingFailedError } from './sync-handling-failed-error.js';
import { WebhookVerificationError } from './webhook-verification-error.js';

/** The error classes of `@churn-risk/core` by their `name`. */
const CLASSES = {
  ChurnRiskError,
  WebhookVerificationError,
  DeliveryRejectedError,
  ReceiverUnavailableError,
  SyncHandlingFailedError,
  HandlersFailedError,
  AlertStalledError,
  AlertCutOffError,
  NonRetryableError,
  IntegrationError,
  ServiceError,
};

/** The `name` of an error class of `@churn-risk/core`. */
type ErrorClassName = keyof typeof CLASSES;

/**
 * Whether `error` is a churn-risk error: an instance of `ChurnRiskError` (any package's, `name`
 * left out) or of the class called `name`. An error of the same class from another copy of the
 * package (two versions installed side by side) is recognised too, by its `name` and its string
 * `code`, where `instanceof` is false.
 *
 * @example
 * try {
 *   await client.getRiskScore('user_42');
 * } catch (error) {
 *   if (isChurnRiskError(error, 'ServiceError') && error.code === 'NOT_FOUND') return undefined;
 *   throw error;
 * }
 */
export function isChurnRiskError<N extends ErrorClassName = 'ChurnRiskError'>(
  error: unknown,
  name?: N,
): error is InstanceType<(typeof CLASSES)[N]> {
  const type: abstract new (...args: never[]) => Error = CLASSES[name ?? 'ChurnRiskError'];
  if (error instanceof type) return true;
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'string') {
    return false;
  }
  return name === undefined ? Object.hasOwn(CLASSES, error.name) : error.name === name;
}
