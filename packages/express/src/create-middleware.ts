import { type Receiver } from '@churn-risk/core';
import { handleNodeRequest, sendNodeResponse, type RawBody } from '@churn-risk/core/adapter';
import type { Request, RequestHandler, Response } from 'express';
import type { RequestWithRawBody } from './raw-body-saver.js';

/** The fix `RAW_BODY_MISSING` names in Express. */
const RAW_BODY_FIX =
  'Mount the churn-risk middleware before express.json() (or any other body parser), or use ' +
  'express.json({ verify: rawBodySaver }) from @churn-risk/express.';

/** The raw bytes a body parser left: `rawBodySaver`'s copy, `express.raw()`'s Buffer or `express.text()`'s string. */
function keptBody(req: Request): RawBody | undefined {
  const { rawBody } = req as RequestWithRawBody;
  if (rawBody instanceof Uint8Array) return rawBody;
  const body: unknown = req.body;
  if (body instanceof Uint8Array || typeof body === 'string') return body;
  return undefined;
}

async function handle(receiver: Receiver, req: Request, res: Response): Promise<void> {
  const options = { kept: keptBody(req), rawBodyFix: RAW_BODY_FIX };
  const result = await handleNodeRequest(receiver, req, options);
  if (result !== undefined) sendNodeResponse(res, result);
}

/**
 * Express middleware that hands churn-risk webhook deliveries to `receiver` and writes back its
 * answer. Mount it with `app.post(path, ...)` (or `app.all`/`app.use` to answer other methods 405),
 * before any `express.json()`, or after `express.json({ verify: rawBodySaver })`, `express.raw()`
 * or `express.text()`. In async mode the alert is processed after the answer has been sent.
 *
 * @example
 * app.post('/webhooks/churn-risk', createMiddleware(receiver));
 */
export function createMiddleware(receiver: Receiver): RequestHandler {
  return (req, res) => handle(receiver, req, res);
}
