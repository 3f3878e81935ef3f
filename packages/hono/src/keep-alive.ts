import type { WaitUntil } from '@churn-risk/core/adapter';
import type { Context } from 'hono';

/** `@hono/node-server` calls `app.fetch(request, { incoming, outgoing })`: never with a context. */
function isNodeServerBindings(env: unknown): boolean {
  return typeof env === 'object' && env !== null && 'incoming' in env && 'outgoing' in env;
}

/**
 * The platform's `waitUntil` for this request: `c.executionCtx.waitUntil`, bound to its context,
 * when Hono has an execution context (Cloudflare Workers: `app.fetch(request, env, ctx)`), else
 * `undefined` (Node via `@hono/node-server`, Bun, Deno: the process lives on, the alert is processed
 * in-process and `receiver.drain()` tracks it).
 *
 * `c.executionCtx` is a getter that throws where there is no context; that throw means "none" here
 * and never becomes an answer. A context without a working `waitUntil` is not "none": the receiver
 * calls the returned function before it accepts anything, so its throw is answered `500` and the
 * sender redelivers, rather than an alert being acknowledged that nobody waits for.
 *
 * @example
 * app.post('/webhooks/churn-risk', createHandler(receiver, { waitUntil: executionContextWaitUntil }));
 */
export function executionContextWaitUntil(c: Context): WaitUntil | undefined {
  // The getter's throw builds an Error with its stack on every request (microseconds): skip it
  // where the answer is known.
  if (isNodeServerBindings(c.env)) return undefined;
  let ctx: Context['executionCtx'];
  try {
    ctx = c.executionCtx;
  } catch {
    return undefined; // no execution context on this platform
  }
  return (promise) => {
    ctx.waitUntil(promise); // called on ctx: Workers' waitUntil throws "Illegal invocation" unbound
  };
}
