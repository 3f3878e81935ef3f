export { createQueueReceiver, createReceiver } from './create-receiver.js';
export type {
  AcceptOptions,
  AcceptResult,
  AcceptedAlert,
  KeepAlive,
  AlertProcessor,
  AlertQueue,
  QueueHealth,
  QueuedAlert,
  SweepOptions,
  SweepResult,
} from './alert-queue.js';
export type { RetryPolicy, StoredTry, TryInput, TryVerdict } from './try-types.js';
export { WORKERS_KEEP_ALIVE_BUDGET_MS } from './keep-alive.js';
export { createMemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export {
  createMemoryDedupeStore,
  type MemoryDedupeStore,
  type MemoryDedupeStoreOptions,
} from './memory-dedupe-store.js';
export {
  handleNodeRequest,
  readNodeBody,
  sendNodeResponse,
  type NodeRequestOptions,
} from './request-body.js';
export type {
  BodyEvent,
  NodeBodyStream,
  NodeHeaders,
  NodeRequest,
  NodeRequestListener,
  NodeResponse,
} from './node-types.js';
export { errorResponse, RETRY_AFTER_SECONDS } from './responses.js';
export { RECEIVER_DEFAULTS } from './resolve-options.js';
export { defaultBackoffMs, DEFAULT_HANDLER_RETRIES } from './retry-policy.js';
export type {
  AlertContext,
  AnyHandler,
  HandlerOptions,
  HandlerRegistration,
  DedupeOptions,
  DedupeStore,
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
