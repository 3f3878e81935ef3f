import { createHandler } from '@churn-risk/hono';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type ExecutionContext } from 'hono';
import type { Server } from 'node:http';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

/** A plain app: the handler answers every method at the webhook path. */
function appFor(receiver: Parameters<typeof createHandler>[0]): Hono {
  const app = new Hono();
  app.all(WEBHOOK_PATH, createHandler(receiver));
  return app;
}

/** In-process: `app.request()`, no socket (no execution context, as on Node). */
const inProcess: MountAdapter = async (receiver) => {
  const app = appFor(receiver);
  return {
    async send({ method, headers, body }) {
      const response = await app.request(WEBHOOK_PATH, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: await response.text(),
      };
    },
    close: async () => undefined,
  };
};

/** A Workers-like context: `waitUntil` throws unless called on the context itself. */
class WorkersLikeContext implements ExecutionContext {
  readonly #kept: Promise<unknown>[] = [];
  props: unknown = {};

  waitUntil(promise: Promise<unknown>): void {
    if (!(#kept in this)) throw new TypeError('Illegal invocation');
    this.#kept.push(promise);
  }

  passThroughOnException(): void {}
}

/** `app.fetch(request, env, ctx)` as Cloudflare Workers calls it: the handler uses `ctx.waitUntil`. */
const withExecutionContext: MountAdapter = async (receiver) => {
  const app = appFor(receiver);
  return {
    async send({ method, headers, body }) {
      const request = new Request(`http://localhost${WEBHOOK_PATH}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const response = await app.fetch(request, {}, new WorkersLikeContext());
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: await response.text(),
      };
    },
    close: async () => undefined,
  };
};

/** On Node through `@hono/node-server`, over a real socket. */
const nodeServer: MountAdapter = (receiver) =>
  mountServer(createAdaptorServer({ fetch: appFor(receiver).fetch }) as Server, WEBHOOK_PATH);

runConformanceSuite('hono (app.request)', inProcess);
runConformanceSuite('hono (app.fetch with an ExecutionContext)', withExecutionContext);
runConformanceSuite('hono (@hono/node-server)', nodeServer);
runConformanceSuite('hono (@hono/node-server)', nodeServer, { queue: 'redis' });
