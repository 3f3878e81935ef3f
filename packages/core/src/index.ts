/**
 * @churn-risk/core: verify, parse and dispatch churn-risk webhook alerts, and call the churn-risk
 * API. See the package README for a working example of each part.
 *
 * Beside this entry: `@churn-risk/core/testing` (signed test deliveries, `signPayload`),
 * `@churn-risk/core/store` (for authors of a durable back end), `@churn-risk/core/adapter` (for
 * authors of a framework adapter) and `@churn-risk/core/wire` (the API's messages as data).
 */
export {
  verifySignature,
  createVerifier,
  type VerifySignatureOptions,
  type VerifierOptions,
  type DeliveryToVerify,
  type Verifier,
  type Secret,
} from './signature/index.js';
export { ChurnRiskError } from './errors/churn-risk-error.js';
export { isChurnRiskError } from './errors/is-churn-risk-error.js';
export { WebhookVerificationError } from './errors/webhook-verification-error.js';
export { DeliveryRejectedError } from './errors/delivery-rejected-error.js';
export { ReceiverUnavailableError } from './errors/receiver-unavailable-error.js';
export { SyncHandlingFailedError } from './errors/sync-handling-failed-error.js';
export {
  AlertCutOffError,
  AlertStalledError,
  HandlersFailedError,
  type FailedHandler,
} from './errors/handlers-failed-error.js';
export { defaultShouldRetry, NonRetryableError } from './errors/non-retryable-error.js';
export { IntegrationError } from './errors/integration-error.js';
export {
  churnRiskAlertSchema,
  extraFields,
  type ChurnRiskAlert,
  type WebhookEventMap,
  type WebhookEventName,
} from './payload/alert-schema.js';
export { alertIdentity, parseEvent, type ParsedEvent } from './payload/parse-event.js';
export { createQueueReceiver, createReceiver } from './create-receiver/create-receiver.js';
export type { SweepResult } from './queue-port/alert-queue.js';
export { RECEIVER_DEFAULTS } from './create-receiver/resolve-options.js';
export { defaultBackoffMs } from './processing/retry-policy.js';
export type {
  AlertContext,
  HandlerOptions,
  DedupeOptions,
  ErrorHandler,
  EventHandler,
  Receiver,
  ReceiverHealth,
  QueueReceiverOptions,
  ReceiverOptions,
  ReceiverStats,
  RetryOptions,
} from './receiver/types.js';
export type { AlertRecord } from './queue-port/handler-types.js';
export {
  ChurnRiskClient,
  ServiceError,
  type AtRiskAllOptions,
  type AtRiskOptions,
  type AtRiskResult,
  type AtRiskUser,
  type BulkEventItem,
  type CallOptions,
  type WriteOptions,
  type ClientOptions,
  type CooldownString,
  type ErrorCode,
  type EventProperties,
  type RequestContext,
  type ResponseContext,
  type RiskScore,
  type RiskTier,
  type TrackResult,
  type UserTraits,
  type WatchedUser,
  type WatchOptions,
} from './client/index.js';
export {
  BATCHER_DEFAULTS,
  createEventBatcher,
  type BatcherOptions,
  type EventBatcher,
} from './batcher/index.js';
export type {
  LogFields,
  Logger,
  LogLevel,
  RejectedDelivery,
  ReceiverTracer,
  TracerSpan,
} from './observability/index.js';
