import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextApiRequest, NextApiResponse } from 'next';
import { errorResponse, handleNodeRequest, sendNodeResponse } from '@churn-risk/core/adapter';
import { receiverOf, type NextReceiverSource } from './receiver-source.js';
import { checkHandlerOptions, type NextHandlerOptions, type NextReceiver } from './types.js';

/** A Pages Router API route handler (`pages/api/...`). */
export type PagesHandler = (req: NextApiRequest, res: NextApiResponse) => Promise<void>;

/** The line a Pages Router webhook route needs so that Next leaves the raw body unread. */
export const BODY_PARSER_CONFIG_LINE = 'export const config = { api: { bodyParser: false } };';

/** The fix `RAW_BODY_MISSING` names in a Pages Router API route. */
const RAW_BODY_FIX = `Next.js parses API route bodies by default: add \`${BODY_PARSER_CONFIG_LINE}\` to this API route.`;

type PagesRequest = IncomingMessage & { body?: unknown };

/**
 * Creates a Pages Router API route handler: `export default createPagesHandler(receiver)`, together
 * with `export const config = { api: { bodyParser: false } }` (without it the handler answers 500 and
 * names that line; other methods are answered 405 by the receiver either way). Only plain Node `req`/`res` methods are used, so it also runs on a bare
 * `node:http` server. Pages API routes have no `after()`: the alert's processing runs in-process
 * after the answer unless `options.waitUntil` is given; use `mode: 'sync'` where the platform may
 * stop the function once the answer is sent. An unknown options key is a `TypeError` that names
 * it and the closest known key. `source` may be a function that returns the receiver, called on
 * each request, as for `createRouteHandler`: a throw from it is answered `500 INTERNAL_ERROR`, logged.
 */
export function createPagesHandler(
  source: NextReceiverSource,
  options: NextHandlerOptions = {},
): PagesHandler {
  checkHandlerOptions('createPagesHandler', options);
  // A `NextReceiver` may lack `refuse` (a test double): refusals are then answered as they are.
  const targetOf = (receiver: NextReceiver) => ({
    handle: (request: Parameters<NextReceiver['handle']>[0]) => receiver.handle(request),
    refuse: (error: unknown) => receiver.refuse?.(error) ?? errorResponse(error),
    maxBodyBytes: receiver.maxBodyBytes,
    bodyTimeoutMs: receiver.bodyTimeoutMs,
  });
  const fixed = typeof source === 'function' ? undefined : targetOf(source);
  return async (req: PagesRequest, res: ServerResponse) => {
    let target = fixed;
    if (target === undefined) {
      const made = receiverOf(source);
      if ('failed' in made) {
        sendNodeResponse(res, made.failed);
        return;
      }
      target = targetOf(made.receiver);
    }
    // Next's body parser ran when `req.body` is set: the signed bytes are gone. `waitUntil` is
    // called before the alert is accepted; if it throws, nothing is.
    const result = await handleNodeRequest(target, req, {
      consumed: req.body !== undefined,
      rawBodyFix: RAW_BODY_FIX,
      waitUntil: options.waitUntil,
    });
    if (result !== undefined) sendNodeResponse(res, result);
  };
}
