import { type Receiver } from '@churn-risk/core';
import { handleNodeRequest, type RawBody, type ReceiverResult } from '@churn-risk/core/adapter';
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

/** Writes the receiver's answer through Koa. */
function send(ctx: Context, result: ReceiverResult): void {
  ctx.status = result.status;
  ctx.set(result.headers); // content-type first: Koa keeps it when the body is set
  ctx.body = result.body;
}

async function handle(receiver: Receiver, ctx: Context): Promise<void> {
  const options = { kept: keptBody(ctx), rawBodyFix: RAW_BODY_FIX };
  const result = await handleNodeRequest(receiver, ctx.req, options);
  if (result !== undefined) send(ctx, result);
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
