/**
 * @churn-risk/ops: an operations page and a JSON API for the failed alerts of any durable back
 * end (Redis, Postgres, D1, SQS), as one Fetch handler with a Node listener. See the package README.
 */
export { createOpsHandler } from './create-ops-handler.js';
export { basicAuth, type BasicAuthOptions } from './basic-auth.js';
export type {
  OpsAuthorize,
  OpsHandler,
  OpsHandlerOptions,
  OpsNodeRequest,
  OpsNodeResponse,
  OpsQueue,
} from './options.js';
export { OpsError, isOpsError, type OpsErrorCode } from './ops-error.js';
export { CSRF_HEADER } from './csrf.js';
export type { FailedAlertJson } from './routes.js';
