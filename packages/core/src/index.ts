/**
 * @churn-risk/core: verify, parse and dispatch churn-risk webhook alerts, and call the churn-risk
 * API. See the package README for a working example of each part.
 */
export * from './signature/index.js';
export { ChurnRiskError } from './errors/churn-risk-error.js';
export {
  WebhookVerificationError,
  isWebhookVerificationError,
} from './errors/webhook-verification-error.js';
export {
  DeliveryRejectedError,
  isDeliveryRejectedError,
} from './errors/delivery-rejected-error.js';
export {
  WEBHOOK_ERROR_STATUS,
  type DeliveryRejectedCode,
  type VerificationErrorCode,
  type WebhookErrorCode,
} from './errors/webhook-error-status.js';
export {
  ReceiverUnavailableError,
  type ReceiverUnavailableCode,
} from './errors/receiver-unavailable-error.js';
export { SyncHandlingFailedError } from './errors/sync-handling-failed-error.js';
export {
  AlertCutOffError,
  AlertStalledError,
  HandlersFailedError,
  type FailedHandler,
} from './errors/handlers-failed-error.js';
export {
  defaultShouldRetry,
  isNonRetryableError,
  NonRetryableError,
} from './errors/non-retryable-error.js';
export {
  IntegrationError,
  isIntegrationError,
  type IntegrationErrorCode,
} from './errors/integration-error.js';
export {
  churnRiskAlertSchema,
  riskTierSchema,
  eventSchemas,
  extraFields,
  type ChurnRiskAlert,
  type WebhookEventMap,
  type WebhookEventName,
} from './payload/alert-schema.js';
export { alertIdentity, parseEvent, type ParsedEvent } from './payload/parse-event.js';
export * as wire from './wire/schemas.js';
export { createQueueReceiver, createReceiver } from './create-receiver/create-receiver.js';
export type { QueueHealth, SweepOptions, SweepResult } from './queue-port/alert-queue.js';
export { WORKERS_KEEP_ALIVE_BUDGET_MS } from './processing/keep-alive.js';
export { RECEIVER_DEFAULTS } from './create-receiver/resolve-options.js';
export { defaultBackoffMs, DEFAULT_HANDLER_RETRIES } from './processing/retry-policy.js';
export type {
  AlertContext,
  HandlerOptions,
  DedupeOptions,
  DrainOptions,
  ErrorHandler,
  EventHandler,
  HeadersInput,
  Receiver,
  ReceiverHealth,
  QueueReceiverOptions,
  ReceiverOptions,
  ReceiverRequest,
  ReceiverResult,
  ReceiverStats,
  RetryOptions,
  WaitUntil,
} from './receiver/types.js';
export type {
  FailedAlert,
  FailedListOptions,
  QueueCounts,
} from './processing/durable/alert-store.js';
export * from './client/index.js';
export * from './batcher/index.js';
export * from './observability/index.js';
