/**
 * `@churn-risk/core/adapter`: what a framework adapter imports to hand deliveries to a receiver
 * (the ones of `@churn-risk/express`, `/koa`, `/fastify`, `/next`, `/hono`, `/lambda` and
 * `/cloudflare` are built on it): reading a Node request's raw body within the size limit,
 * writing a receiver's answer to a Node response, and the answers for what goes wrong before the
 * receiver sees the body (or before there is a receiver: `receiverFailureResult`).
 *
 * @example
 * import { handleNodeRequest, sendNodeResponse } from '@churn-risk/core/adapter';
 *
 * // a Node (req, res) framework whose request still holds its unread body
 * const result = await handleNodeRequest(receiver, req, { rawBodyFix: 'mount it before the body parser' });
 * if (result !== undefined) sendNodeResponse(res, result);
 */
export { deliveryRefusal, type RefusalAnswer } from './errors/delivery-refusal.js';
export { payloadTooLarge, requestTimeout } from './errors/delivery-rejected-error.js';
export {
  RAW_BODY_MISSING,
  rawBodyMissingError,
  rawBodyMissingResult,
} from './receiver/raw-body-missing.js';
export type {
  BodyEvent,
  NodeBodyStream,
  NodeHeaders,
  NodeRequest,
  NodeRequestListener,
  NodeResponse,
} from './receiver/node-types.js';
export {
  handleNodeRequest,
  readNodeBody,
  readWebBody,
  sendNodeResponse,
  type NodeRequestOptions,
} from './receiver/request-body.js';
export { receiverFailureResult } from './receiver/receiver-failure.js';
export { errorResponse, RETRY_AFTER_SECONDS } from './receiver/responses.js';
export { WEBHOOK_ERROR_STATUS } from './errors/webhook-error-status.js';
export { WORKERS_KEEP_ALIVE_BUDGET_MS } from './processing/keep-alive.js';
export type { WaitUntil } from './receiver/types.js';
export type { HeadersInput, ReceiverRequest, ReceiverResult } from './receiver/types.js';
export type { RawBody } from './signature/bytes.js';
