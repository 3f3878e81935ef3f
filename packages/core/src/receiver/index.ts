export { createQueueReceiver, createReceiver } from './create-receiver.js';
export type { QueueHealth, SweepOptions, SweepResult } from './alert-queue.js';
export { WORKERS_KEEP_ALIVE_BUDGET_MS } from './keep-alive.js';
export { RECEIVER_DEFAULTS } from './resolve-options.js';
export { defaultBackoffMs, DEFAULT_HANDLER_RETRIES } from './retry-policy.js';
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
} from './types.js';
