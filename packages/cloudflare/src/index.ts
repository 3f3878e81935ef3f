/**
 * @churn-risk/cloudflare: a Cloudflare Workers module worker for churn-risk webhook alerts.
 */
export {
  createWorker,
  type ChurnRiskWorker,
  type CreateWorkerOptions,
  type WorkerExecutionContext,
  type WorkerSecret,
} from './create-worker.js';
