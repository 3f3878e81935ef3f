/**
 * @churn-risk/hono: a Hono handler for churn-risk webhook alerts, on Node (`@hono/node-server`),
 * Bun, Deno and Cloudflare Workers.
 */
export {
  createHandler,
  type HonoHandlerOptions,
  type HonoReceiverSource,
} from './create-handler.js';
export { executionContextWaitUntil } from './keep-alive.js';
