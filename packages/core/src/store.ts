/**
 * `@churn-risk/core/store`: what a back-end author imports to make a durable queue for
 * `createReceiver({ queue })`. A pull-based back end implements `AlertStore` (storage only) and
 * hands it to `createDurableQueue`, which runs the leases, the tries and their verdicts; a
 * platform queue that pushes messages uses `createPushQueue`. `storeContract` and
 * `pushQueueContract` from `@churn-risk/core/testing` are the test suites every back end passes.
 *
 * @example
 * import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
 *
 * // the reference store, in this process only: for tests
 * const queue = createDurableQueue(createMemoryStore(), { leaseMs: 5_000 });
 * const receiver = createReceiver({ secret, queue });
 */
export {
  resolveFailedListOptions,
  type AlertLeaseStore,
  type AlertStore,
  type AlertVerdict,
  type FailedAlertStore,
  type FailedListOptions,
  type QueueCounts,
  type StoreAcceptOptions,
  type TakeOptions,
  type UserOrderKey,
  orderKeyOf,
} from './processing/durable/alert-store.js';
export {
  createDurableQueue,
  DURABLE_QUEUE_DEFAULTS,
  type DurableQueue,
  type DurableQueueOptions,
} from './processing/durable/durable-queue.js';
export { createMemoryStore, type MemoryStoreOptions } from './processing/durable/memory-store.js';
export {
  createPushQueue,
  type PushQueue,
  type PushQueueOptions,
  type PushSendOptions,
  type PushVerdict,
} from './processing/durable/push-queue.js';
export { PushOrder, type OrderedTry } from './processing/durable/push-order.js';
export { withTimeout } from './processing/durable/queue-base.js';
export { RENAMED_OPTIONS, refuseUnknownOptions } from './options/known-options.js';
export { integerOption } from './options/integer-option.js';
export { describeError } from './errors/handlers-failed-error.js';
export type {
  AcceptOptions,
  AcceptResult,
  AlertProcessor,
  AlertQueue,
  AlertRecord,
  KeepAlive,
  QueueHealth,
} from './queue-port/alert-queue.js';
export type { AnyHandler, HandlerRegistration } from './queue-port/handler-types.js';
export { createMemoryQueue, type MemoryQueueOptions } from './processing/memory-queue.js';
export {
  createMemoryDedupeStore,
  type MemoryDedupeStore,
  type MemoryDedupeStoreOptions,
} from './processing/memory-dedupe-store.js';
export type { DedupeStore } from './receiver/types.js';
export type { RetryPolicy, TryInput, TryLease, TryVerdict } from './queue-port/try-types.js';
export type { SweepOptions } from './queue-port/alert-queue.js';
export type { TraceCarrier } from './observability/trace-carrier.js';
