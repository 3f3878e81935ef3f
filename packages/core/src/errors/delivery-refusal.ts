import { DeliveryRejectedError } from './delivery-rejected-error.js';
import { SyncHandlingFailedError } from './sync-handling-failed-error.js';
import { ReceiverUnavailableError } from './receiver-unavailable-error.js';
import type { WebhookErrorCode } from './webhook-error-status.js';
import { isWebhookVerificationError } from './webhook-verification-error.js';

/** A refused delivery's answer: its status, code and a message that is safe to send back. */
export interface RefusalAnswer {
  status: number;
  code: WebhookErrorCode;
  message: string;
}

const REFUSAL_NAMES = new Set([
  'DeliveryRejectedError',
  'ReceiverUnavailableError',
  'SyncHandlingFailedError',
]);

/**
 * The answer of an error the receiver refuses a delivery with, as the receiver's status table gives it: a
 * `WebhookVerificationError` (401) or a `DeliveryRejectedError` (405, 413, 400: the delivery is at
 * fault), a `ReceiverUnavailableError` (503) or a
 * `SyncHandlingFailedError` (500, sync mode). `undefined` for any other value (an `IntegrationError`
 * or a bug), also across copies of this package.
 */
export function deliveryRefusal(error: unknown): RefusalAnswer | undefined {
  if (
    isWebhookVerificationError(error) ||
    error instanceof DeliveryRejectedError ||
    error instanceof ReceiverUnavailableError ||
    error instanceof SyncHandlingFailedError ||
    (error instanceof Error &&
      REFUSAL_NAMES.has(error.name) &&
      typeof (error as { code?: unknown }).code === 'string' &&
      typeof (error as { status?: unknown }).status === 'number')
  ) {
    const { status, code, message } = error as RefusalAnswer;
    return { status, code, message };
  }
  return undefined;
}
