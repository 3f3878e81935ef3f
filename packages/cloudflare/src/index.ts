/**
 * @churn-risk/cloudflare: a Cloudflare Workers module worker for churn-risk webhook alerts, in
 * memory (`createWorker`, kept alive by `ctx.waitUntil`) or in queue mode (`createQueueWorker`,
 * Cloudflare Queues and D1). Each is its own function, so a worker bundles only its own mode.
 */
export {
  createWorker,
  type ChurnRiskWorker,
  type CreateWorkerOptions,
  type WorkerExecutionContext,
  type WorkerSecret,
} from './create-worker.js';
export {
  createQueueWorker,
  type ChurnRiskQueueWorker,
  type CreateQueueWorkerOptions,
} from './create-queue-worker.js';
export {
  createCloudflareQueue,
  type CloudflareQueue,
  type CloudflareQueueOptions,
} from './cloudflare-queue.js';
export { createFailedStore, type FailedStore } from './d1-tables.js';
export { resolveSecret } from './resolve-secret.js';
export type {
  D1Database,
  D1Statement,
  QueueBatch,
  QueueMessage,
  QueueProducer,
} from './bindings.js';
