import { keepAlive } from './keep-alive.js';
import { checkHandlerOptions, type NextHandlerOptions, type NextReceiver } from './types.js';

/** An App Router route handler: Web `Request` in, Web `Response` out. */
export type RouteHandler = (request: Request) => Promise<Response>;

/**
 * Creates an App Router route handler (`app/.../route.ts`) that verifies and dispatches churn-risk
 * deliveries: `export const POST = createRouteHandler(receiver)`. The body is read as raw bytes with
 * the receiver's `maxBodyBytes` enforced while reading. The alert is processed after the answer,
 * inside Next's `after()`, so the platform keeps the function alive; called outside a Next request
 * (a test handing it a `Request`) it falls back to `options.waitUntil`, else runs in-process (the
 * receiver's `drain()` tracks it). Works on the Node.js and the edge runtime. An unknown options
 * key is a `TypeError` that names it and the closest known key.
 */
export function createRouteHandler(
  receiver: NextReceiver,
  options: NextHandlerOptions = {},
): RouteHandler {
  checkHandlerOptions('createRouteHandler', options);
  const waitUntil = (done: Promise<unknown>): void => {
    keepAlive(done, options.waitUntil);
  };
  return (request) => receiver.fetch(request, { waitUntil });
}
