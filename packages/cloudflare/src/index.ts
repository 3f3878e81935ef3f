/**
 * @churn-risk/cloudflare: a Cloudflare Workers module worker for churn-risk webhook alerts, in
 * memory (kept alive by `ctx.waitUntil`) or in queue mode (Cloudflare Queues, D1).
 */
export {
  createWorker,
  type ChurnRiskQueueWorker,
  type ChurnRiskWorker,
  type CreateWorkerOptions,
  type WorkerExecutionContext,
  type WorkerSecret,
} from './create-worker.js';
export {
  createCloudflareQueue,
  type CloudflareQueue,
  type CloudflareQueueOptions,
} from './cloudflare-queue.js';
export { createFailedStore, type FailedStore } from './d1-tables.js';
export type {
  D1Database,
  D1Statement,
  QueueBatch,
  QueueMessage,
  QueueProducer,
} from './bindings.js';
