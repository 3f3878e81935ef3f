import { type Receiver } from '@churn-risk/core';
import { refuseUnknownOptions } from '@churn-risk/core/store';
import {
  rawBodyMissingError,
  receiverFailureResult,
  type ReceiverResult,
  type WaitUntil,
} from '@churn-risk/core/adapter';
import type { Context, Handler } from 'hono';
import { executionContextWaitUntil } from './keep-alive.js';
import { bodyTaken, rawBodyOf, STREAM } from './raw-body.js';

/** Options of `createHandler`. */
export interface HonoHandlerOptions {
  /**
   * How the platform keeps an accepted alert's processing alive after the answer, chosen per
   * request. The receiver calls the returned function before it accepts the alert; when it
   * throws, nothing is accepted and the answer is `500`. Return `undefined` to process in-process
   * (`receiver.drain()` tracks it). Default `executionContextWaitUntil`: `c.executionCtx.waitUntil`,
   * bound, on Cloudflare Workers; in-process on Node, Bun and Deno.
   *
   * @example
   * import { waitUntil } from '@vercel/functions';
   * createHandler(receiver, { waitUntil: () => waitUntil });
   */
  waitUntil?: (c: Context) => WaitUntil | undefined;
}

/** The options `createHandler` knows: any other key is a `TypeError`. */
const OPTION_KEYS = ['waitUntil'] as const satisfies readonly (keyof HonoHandlerOptions)[];

/** The fix `RAW_BODY_MISSING` names in Hono. */
const RAW_BODY_FIX =
  'Mount createHandler(receiver) from @churn-risk/hono before any middleware that reads the ' +
  'body, or have that middleware read it with c.req.arrayBuffer() or c.req.text(), whose result ' +
  'Hono keeps for the handler (not c.req.raw or c.req.formData()).';

function toResponse(result: ReceiverResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

/**
 * `response` with `Connection: close`: after a body refused part way (`408`, `413`) the rest of it
 * is unread, so the connection cannot serve another request (a Node server closes it; the Workers
 * runtime manages its connections itself and drops the header).
 */
function closing(response: Response): Response {
  response.headers.set('connection', 'close');
  return response;
}

/** Answers a POST: from its raw bytes, or 500 RAW_BODY_MISSING when a middleware consumed them. */
async function handlePost(
  receiver: Receiver,
  c: Context,
  waitUntil: WaitUntil | undefined,
): Promise<Response> {
  const request = c.req.raw;
  let body: Uint8Array | string | typeof STREAM | undefined;
  try {
    body = await rawBodyOf(c, receiver.maxBodyBytes, receiver.bodyTimeoutMs);
  } catch (error) {
    // The read failed (logged and reported); the rest of the body stays unread.
    return closing(toResponse(receiver.refuse(error)));
  }
  if (body === STREAM && !bodyTaken(request)) {
    const response = await receiver.fetch(request, { waitUntil });
    return response.status === 408 || response.status === 413 ? closing(response) : response;
  }
  if (body === STREAM || body === undefined) {
    return toResponse(receiver.refuse(rawBodyMissingError(RAW_BODY_FIX)));
  }
  const { method, headers } = request;
  return toResponse(await receiver.handle({ method, headers, body, waitUntil }));
}

/**
 * Where the handler gets its receiver: the receiver itself, or a function that returns it for a
 * request (made on the first one and kept: on Cloudflare Workers the secret is in `c.env`).
 */
export type HonoReceiverSource = Receiver | ((c: Context) => Receiver);

/** How to set the secret, named when the receiver function failed for a missing one. */
const SECRET_FIX =
  'on Cloudflare Workers with npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET (locally: in ' +
  '.dev.vars), elsewhere in the process environment';

/**
 * Creates a Hono handler that hands churn-risk webhook deliveries to `receiver` and answers with
 * its status, headers and JSON body. The receiver gets the body's raw bytes, never more than
 * `maxBodyBytes` read: a body framed by a `Content-Length` within the limit is read whole with
 * `c.req.arrayBuffer()`, any other goes to `receiver.fetch(c.req.raw)`, which counts while reading
 * (or answers `413` unread). When a middleware read the body first through `c.req`, the bytes or
 * text Hono kept are verified; when nothing usable is left, the answer is `500 RAW_BODY_MISSING`. On Cloudflare Workers the alert is kept alive with the bound
 * `c.executionCtx.waitUntil`; on Node, Bun and Deno it is processed in-process after the answer.
 * Mount it with `app.post(path, ...)`, or `app.all(path, ...)` to answer other methods `405`.
 * An unknown options key is a `TypeError` that names it and the closest known key.
 *
 * `source` is the receiver, or a function of the request's context that returns it (where the
 * secret is known only at the request: `c.env` on Cloudflare Workers). The function is called on
 * every request, so keep the receiver it makes (`receiver ??= ...`). When it throws, the answer is
 * `500` `{"error":{"code":"INTERNAL_ERROR","message":...}}` and the message is logged with
 * `console.error` (`receiverFailureResult` of `@churn-risk/core/adapter`): an `IntegrationError`
 * as it is (`resolveSecret` of `@churn-risk/cloudflare` names the unset binding and `wrangler
 * secret put`); for a missing or empty secret given to `createReceiver`, that one is required and
 * how to set `CHURN_RISK_WEBHOOK_SECRET` (`wrangler secret put` on Cloudflare Workers, the process
 * environment elsewhere); for a bad option, its `TypeError`'s message; never a value.
 *
 * @example
 * app.post('/webhooks/churn-risk', createHandler(receiver));
 * app.post('/webhooks/churn-risk', createHandler((c) => receiverFor(c.env)));
 */
export function createHandler(
  source: HonoReceiverSource,
  options: HonoHandlerOptions = {},
): Handler {
  refuseUnknownOptions('createHandler', options, OPTION_KEYS);
  const keepAlive = options.waitUntil ?? executionContextWaitUntil;
  return async (c) => {
    let receiver: Receiver;
    try {
      receiver = typeof source === 'function' ? source(c) : source;
    } catch (error) {
      return toResponse(receiverFailureResult(error, 'handler', SECRET_FIX));
    }
    let waitUntil: WaitUntil | undefined;
    try {
      waitUntil = keepAlive(c);
    } catch (error) {
      return toResponse(receiver.refuse(error)); // a custom option failed: nothing accepted
    }
    const request = c.req.raw;
    // Other methods: the receiver answers 405 without reading.
    if (request.method !== 'POST') return receiver.fetch(request, { waitUntil });
    return handlePost(receiver, c, waitUntil);
  };
}
