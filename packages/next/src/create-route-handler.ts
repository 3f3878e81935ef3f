import { keepAlive } from './keep-alive.js';
import { receiverOf, type NextReceiverSource } from './receiver-source.js';
import { checkHandlerOptions, type NextHandlerOptions } from './types.js';

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
 *
 * `source` may be a function that returns the receiver, called on each request
 * (`export const POST = createRouteHandler(churnRisk)`, with `churnRisk` keeping the receiver it
 * makes): nothing is made when `next build` loads the route, and when the function throws (a
 * secret not set) the answer is `500 {"error":{"code":"INTERNAL_ERROR",...}}`, logged, whose
 * message names the missing secret and how to set it; never a value.
 */
export function createRouteHandler(
  source: NextReceiverSource,
  options: NextHandlerOptions = {},
): RouteHandler {
  checkHandlerOptions('createRouteHandler', options);
  const waitUntil = (done: Promise<unknown>): void => {
    keepAlive(done, options.waitUntil);
  };
  return async (request) => {
    const made = receiverOf(source);
    if ('failed' in made) {
      const { status, headers, body } = made.failed;
      return new Response(body, { status, headers });
    }
    return made.receiver.fetch(request, { waitUntil });
  };
}
