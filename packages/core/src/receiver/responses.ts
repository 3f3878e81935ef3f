import { deliveryRefusal } from '../errors/delivery-refusal.js';
import type { WebhookErrorCode } from '../errors/webhook-error-status.js';
import { isIntegrationError } from '../errors/integration-error.js';
import type { ReceiverResult } from './types.js';

const JSON_TYPE = 'application/json';
const SETTLED: Promise<void> = Promise.resolve();

/** Seconds a sender should wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS: Readonly<Partial<Record<WebhookErrorCode, number>>> =
  Object.freeze({
    OVERLOADED: 5,
    CLOSED: 30,
  });

/** A JSON answer; `done` defaults to an already settled promise. */
export function jsonResult(
  status: number,
  value: unknown,
  extraHeaders: Record<string, string> = {},
  done: Promise<void> = SETTLED,
): ReceiverResult {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...extraHeaders },
    body: JSON.stringify(value),
    done,
  };
}

/**
 * The answer to a refused delivery (a `WebhookVerificationError`, `DeliveryRejectedError`,
 * `ReceiverUnavailableError`, `SyncHandlingFailedError` or `IntegrationError`): its status and `{"error":{"code","message"}}`,
 * plus `Allow` for 405 and `Retry-After` for 503. Any other error value becomes a 500 with a
 * generic message (its own message is not sent, as it may carry internal details).
 */
export function errorResponse(error: unknown): ReceiverResult {
  if (isIntegrationError(error)) {
    return jsonResult(500, { error: { code: error.code, message: error.message } });
  }
  const refusal = deliveryRefusal(error);
  if (refusal === undefined) {
    return jsonResult(500, {
      error: { code: 'INTERNAL_ERROR', message: 'The webhook could not be processed.' },
    });
  }
  const { status, code, message } = refusal;
  const headers: Record<string, string> = {};
  if (code === 'METHOD_NOT_ALLOWED') headers.allow = 'POST';
  const retryAfter = RETRY_AFTER_SECONDS[code];
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  return jsonResult(status, { error: { code, message } }, headers);
}
