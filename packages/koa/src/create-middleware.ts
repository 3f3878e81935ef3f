import {
  isWebhookVerificationError,
  rawBodyMissingError,
  readNodeBody,
  type RawBody,
  type Receiver,
  type ReceiverResult,
} from '@churn-risk/core';
import type { Context, Middleware } from 'koa';

/** The fix `RAW_BODY_MISSING` names in Koa. */
const RAW_BODY_FIX =
  'Mount createMiddleware(receiver) from @churn-risk/koa before the body parser (for example ' +
  'app.use(webhookRouter.routes()) ahead of app.use(bodyParser())), or parse with ' +
  'koa-bodyparser or @koa/bodyparser, which keep the raw body on ctx.request.rawBody.';

/** What a body parser may have left on `ctx.request`. */
interface ParsedRequest {
  /** The body's text, kept by koa-bodyparser and @koa/bodyparser. */
  rawBody?: unknown;
  body?: unknown;
}

/** The raw body a parser kept: `ctx.request.rawBody`, or a body a raw parser left as bytes. */
function keptBody(ctx: Context): RawBody | undefined {
  const { rawBody, body } = ctx.request as ParsedRequest;
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (body instanceof Uint8Array) return body;
  return undefined;
}

/**
 * The body read from `ctx.req` (limit enforced while reading); `undefined` when a parser consumed
 * it into something else.
 */
function unreadBody(ctx: Context, maxBytes: number): Promise<RawBody> | undefined {
  const { req } = ctx;
  if (req.readableEnded) return undefined;
  if (req.destroyed) {
    return Promise.reject(new Error('The client closed the request before its body was read.'));
  }
  return readNodeBody(req, { maxBytes });
}

/** Writes the receiver's answer through Koa. */
function send(ctx: Context, result: ReceiverResult): void {
  ctx.status = result.status;
  ctx.set(result.headers); // content-type first: Koa keeps it when the body is set
  ctx.body = result.body;
}

async function handle(receiver: Receiver, ctx: Context): Promise<void> {
  let body: RawBody | null | undefined = null; // other methods: the receiver answers 405 unread
  if (ctx.method === 'POST') {
    try {
      body = keptBody(ctx) ?? (await unreadBody(ctx, receiver.maxBodyBytes));
    } catch (error) {
      if (ctx.req.destroyed && !isWebhookVerificationError(error)) return; // the client went away
      // 413 while reading (the rest stays unread: the connection cannot be reused), or a failed stream.
      const result = receiver.reject(error); // logged and reported like any refused delivery
      result.headers.connection = 'close';
      send(ctx, result);
      return;
    }
  }
  if (body === undefined) {
    send(ctx, receiver.reject(rawBodyMissingError(RAW_BODY_FIX))); // logged, reported
    return;
  }
  send(ctx, await receiver.handle({ method: ctx.method, headers: ctx.headers, body }));
}

/**
 * Koa 3 middleware that hands churn-risk webhook deliveries to `receiver` and writes back its
 * status, headers and JSON body through `ctx`. It reads the raw body from `ctx.req` (the receiver's
 * `maxBodyBytes` enforced while reading), or takes `ctx.request.rawBody` when `koa-bodyparser` or
 * `@koa/bodyparser` ran first. In async mode the alert is processed after the answer has been sent.
 * It ends the request: it never calls `next`.
 *
 * @example
 * router.post('/webhooks/churn-risk', createMiddleware(receiver));
 */
export function createMiddleware(receiver: Receiver): Middleware {
  return (ctx) => handle(receiver, ctx);
}
