/**
 * @churn-risk/next: Next.js 16 route handlers for churn-risk webhook alerts, for the App Router
 * (`createRouteHandler`, Node.js and edge runtimes) and the Pages Router (`createPagesHandler`).
 */
export { createRouteHandler, type RouteHandler } from './create-route-handler.js';
export {
  createPagesHandler,
  BODY_PARSER_CONFIG_LINE,
  type PagesHandler,
} from './create-pages-handler.js';
export type { NextHandlerOptions, NextReceiver, WaitUntil } from './types.js';
export type { NextReceiverSource } from './receiver-source.js';
export {
  createSweepHandler,
  type SweepHandlerOptions,
  type SweepReceiver,
} from './create-sweep-handler.js';
