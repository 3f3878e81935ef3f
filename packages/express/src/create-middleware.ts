import {
  rawBodyMissingError,
  readNodeBody,
  sendNodeResponse,
  type Receiver,
  type RawBody,
} from '@churn-risk/core';
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

/**
 * The raw body: kept by a parser, else read from the stream (limit enforced while reading);
 * `undefined` when a parser consumed it without keeping the bytes.
 */
async function rawBodyOf(req: Request, maxBytes: number): Promise<RawBody | null | undefined> {
  if (req.method !== 'POST') return null; // the receiver answers 405 without reading
  const kept = keptBody(req);
  if (kept !== undefined) return kept;
  // A parser read the stream (into an object) and kept no bytes, or the client is gone: do not wait.
  // The stream's state decides, not `req.body`: body-parser 1.x sets `{}` on bodies it skips.
  if (req.readableEnded || req.destroyed) return undefined;
  return readNodeBody(req, { maxBytes });
}

async function handle(receiver: Receiver, req: Request, res: Response): Promise<void> {
  try {
    const body = await rawBodyOf(req, receiver.maxBodyBytes);
    if (body === undefined) {
      sendNodeResponse(res, receiver.reject(rawBodyMissingError(RAW_BODY_FIX))); // logged, reported
      return;
    }
    const result = await receiver.handle({ method: req.method, headers: req.headers, body });
    sendNodeResponse(res, result);
  } catch (error) {
    // 413 while reading (the rest of the body stays unread, so the connection cannot be reused),
    // or the stream failed. sendNodeResponse does nothing when the client has gone.
    const result = receiver.reject(error); // logged and reported like any refused delivery
    result.headers.connection = 'close';
    sendNodeResponse(res, result);
  }
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
