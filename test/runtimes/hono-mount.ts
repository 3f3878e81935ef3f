import type { Receiver } from '@churn-risk/core';
import { createHandler } from '@churn-risk/hono';
import { Hono, type Handler } from 'hono';
import type { HonoMountFactory } from './host.js';

/**
 * The Hono app of the host: `createHandler(receiver)` mounted with `app.all('/hono/:name', ...)`
 * (all methods, so that the receiver answers `405` itself), one handler per hosted receiver. The
 * host calls `app.fetch` with the runtime's own arguments: `(request, env, ctx)` on workerd, where
 * the adapter finds `c.executionCtx.waitUntil`, and `(request, server)` or `(request, info)` on Bun
 * and Deno, where it processes in-process.
 */
export const honoMount: HonoMountFactory = (hosted) => {
  const handlers = new WeakMap<Receiver, Handler>();
  const app = new Hono();
  app.use('/hono/:name', async (c, next) => {
    await next();
    hosted.answered(c.req.param('name'), c.res.status);
  });
  app.all('/hono/:name', (c, next) => {
    const receiver = hosted.receiver(c.req.param('name'));
    if (receiver === undefined) return c.json({ error: 'no such receiver' }, 404);
    let handler = handlers.get(receiver);
    if (handler === undefined) {
      handler = createHandler(receiver);
      handlers.set(receiver, handler);
    }
    return handler(c, next);
  });
  return app;
};
