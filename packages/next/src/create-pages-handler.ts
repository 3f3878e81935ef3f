import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextApiRequest, NextApiResponse } from 'next';
import {
  errorResponse,
  isWebhookVerificationError,
  rawBodyMissingError,
  readNodeBody,
  sendNodeResponse,
} from '@churn-risk/core';
import type { NextHandlerOptions, NextReceiver } from './types.js';

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
 * stop the function once the answer is sent.
 */
export function createPagesHandler(
  receiver: NextReceiver,
  options: NextHandlerOptions = {},
): PagesHandler {
  return async (req: PagesRequest, res: ServerResponse) => {
    let body: Uint8Array | null = null;
    // Only a POST needs its raw body: any other method goes to the receiver without one (405,
    // `Allow: POST`), whether or not Next's body parser ran.
    if (req.method?.toUpperCase() === 'POST') {
      if (req.body !== undefined || req.readableEnded) {
        const missing = rawBodyMissingError(RAW_BODY_FIX);
        sendNodeResponse(res, receiver.reject?.(missing) ?? errorResponse(missing));
        return;
      }
      try {
        body = await readNodeBody(req, { maxBytes: receiver.maxBodyBytes });
      } catch (error) {
        if (req.destroyed && !isWebhookVerificationError(error)) return; // the client went away
        // A receiver logs and reports it like any refused delivery.
        const result = receiver.reject?.(error) ?? errorResponse(error);
        // The rest of the body was left unread: the connection cannot be reused.
        sendNodeResponse(res, { ...result, headers: { ...result.headers, connection: 'close' } });
        return;
      }
    }
    // `waitUntil` is called before the alert is accepted; if it throws, nothing is (SPEC 12).
    const result = await receiver.handle({
      method: req.method ?? '',
      headers: req.headers,
      body,
      waitUntil: options.waitUntil,
    });
    sendNodeResponse(res, result);
  };
}
