import { createDurableQueue, createMemoryStore, type DurableQueue } from '@churn-risk/core/store';
import { createOpsHandler, CSRF_HEADER, type OpsHandler } from '@churn-risk/ops';
import { serve, type ServerType } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH, authorize } from '../../packages/ops/test/client.js';
import {
  failingReceiver,
  makeAlert,
  until,
  type FailingReceiver,
} from '../../packages/ops/test/fixture.js';

// The handler mounted at `/ops` as the package README mounts it in Express, Fastify, Koa and Hono:
// the page, the API, and a retry with the page's token, through each framework.

let queue: DurableQueue;
let fixture: FailingReceiver;
let ops: OpsHandler;

beforeAll(() => {
  queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  fixture = failingReceiver(queue);
  ops = createOpsHandler({ queue, authorize });
});

afterAll(() => fixture.receiver.close({ timeoutMs: 5_000 }));

/** A started server's base URL and how to stop it. */
interface Mounted {
  url: string;
  close(): Promise<void>;
}

const urlOf = (server: Server | ServerType): string =>
  `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
const closing = (server: Server | ServerType) => (): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });

async function listening(server: Server): Promise<Mounted> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: urlOf(server), close: closing(server) };
}

const mounts: Record<string, () => Promise<Mounted>> = {
  Express: () => {
    const app = express();
    app.use('/ops', (req, res) => void ops.node(req, res));
    return listening(createServer(app));
  },
  'Express, after express.json()': () => {
    const app = express();
    app.use(express.json()); // the handler takes the body the parser read
    app.use('/ops', (req, res) => void ops.node(req, res));
    return listening(createServer(app));
  },
  Fastify: async () => {
    const app = Fastify();
    const serveOps = (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      reply.hijack();
      return ops.node(request.raw, reply.raw);
    };
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.all('/ops', serveOps);
      scope.all('/ops/*', serveOps);
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  Koa: () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (!/^\/ops(\/|$)/.test(ctx.path)) return next();
      ctx.respond = false;
      await ops.node(ctx.req, ctx.res);
    });
    const handle = app.callback();
    return listening(createServer((req, res) => void handle(req, res)));
  },
  Hono: async () => {
    const app = new Hono();
    app.all('/ops', (c) => ops(c.req.raw));
    app.all('/ops/*', (c) => ops(c.req.raw));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    return { url: urlOf(server), close: closing(server) };
  },
};

describe.each(Object.keys(mounts))('the operations handler in %s', (name) => {
  it('serves the page and the API under /ops, and retries with the page token', async () => {
    fixture.broken = true;
    const alert = makeAlert();
    await fixture.deliver(alert);
    await until(async () => (await queue.failed()).some((f) => f.alert.userId === alert.userId));
    const mounted = await (mounts[name] as () => Promise<Mounted>)();
    try {
      const page = await fetch(`${mounted.url}/ops`, { headers: AUTH });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(alert.userId);
      expect((await fetch(`${mounted.url}/ops/api/failed`)).status).toBe(401);
      const [failed] = await queue.failed();
      fixture.broken = false;
      const retry = await fetch(`${mounted.url}/ops/api/retry`, {
        method: 'POST',
        headers: {
          ...AUTH,
          origin: mounted.url,
          'content-type': 'application/json',
          [CSRF_HEADER]: page.headers.get(CSRF_HEADER) ?? '',
        },
        body: JSON.stringify({ id: failed?.id }),
      });
      expect(await retry.json()).toEqual({ retried: 1 });
      await until(async () => (await queue.failed()).length === 0);
    } finally {
      await mounted.close();
    }
  });
});
