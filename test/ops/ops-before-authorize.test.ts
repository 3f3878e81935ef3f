import { createDurableQueue, createMemoryStore, type DurableQueue } from '@churn-risk/core/store';
import { createOpsHandler, CSRF_HEADER, type OpsHandler } from '@churn-risk/ops';
import express from 'express';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH, authorize } from '../../packages/ops/test/client.js';
import { listenLocal, rawRequest, type LocalServer } from '../support/slow-requests.js';

// Nothing before `authorize` but routing, on a real listening server in each Node framework: a
// request without credentials is answered 401 whatever its method or body (the body is not read:
// an oversized or dripping one is refused at once, the connection closed); once authorized, a
// method the route does not take is 405 with `Allow` (TRACE included, never 500), and a retry
// body not whole within `bodyTimeoutMs` is 408 with the connection closed.

const BODY_TIMEOUT_MS = 1_000;
let queue: DurableQueue;
let ops: OpsHandler;
let calls = 0;

beforeAll(() => {
  queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  ops = createOpsHandler({
    queue,
    authorize: (request) => {
      calls += 1;
      return authorize(request);
    },
    bodyTimeoutMs: BODY_TIMEOUT_MS,
  });
});

afterAll(() => queue.close());

type Mounted = LocalServer;
const listening = listenLocal;

const mounts: Record<string, () => Promise<Mounted>> = {
  'node:http (every path to ops.node)': () =>
    listening(createServer((req, res) => void ops.node(req, res))),
  Express: () => {
    const app = express();
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
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
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
};

const errorCode = (body: string): unknown =>
  (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;

describe.each(Object.keys(mounts))('ops.node in %s', (name) => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await (mounts[name] as () => Promise<Mounted>)();
  });
  afterAll(() => mounted.close());

  it('answers 401 to TRACE, PUT and DELETE without credentials, and 405 with Allow after', async () => {
    const { port } = mounted;
    for (const method of ['TRACE', 'PUT', 'DELETE', 'PATCH']) {
      const before = calls;
      const refused = await rawRequest({ port, method, path: '/ops', closeWithinMs: 100 });
      expect(refused.status, method).toBe(401);
      expect(errorCode(refused.body)).toBe('UNAUTHORIZED');
      expect(calls).toBe(before + 1);
      const allowed = await rawRequest({
        port,
        method,
        path: '/ops',
        headers: AUTH,
        closeWithinMs: 100,
      });
      expect(allowed.status, method).toBe(405);
      expect(allowed.headers.allow).toBe('GET');
    }
    const trace = await rawRequest({
      port,
      method: 'TRACE',
      path: '/ops/api/retry',
      headers: AUTH,
    });
    expect(trace.status).toBe(405);
    expect(trace.headers.allow).toBe('POST');
  });

  it('answers 401 to an unauthenticated POST of any size without reading its body', async () => {
    const { port } = mounted;
    const headers = { 'content-type': 'application/json' };
    const before = calls;
    // 5,000 bytes (over the retry body's 4,096): 401, not 413.
    const big = await rawRequest({
      port,
      method: 'POST',
      path: '/ops/api/retry',
      headers: { ...headers, 'content-length': '5000' },
      body: 'x'.repeat(5_000),
    });
    expect(big.status).toBe(401);
    // A declared body of which nothing is sent: answered without waiting for it, connection closed.
    const unsent = await rawRequest({
      port,
      method: 'POST',
      path: '/ops/api/retry',
      headers: { ...headers, 'content-length': '4000' },
    });
    expect(unsent.status).toBe(401);
    expect(unsent.headers.connection).toBe('close');
    expect(unsent.closed).toBe(true);
    // A chunked body dripping one byte every 200 ms.
    const drip = await rawRequest({
      port,
      method: 'POST',
      path: '/ops/api/retry',
      headers,
      body: '{',
      drip: { chunked: true, everyMs: 200 },
    });
    expect(drip.status).toBe(401);
    expect(drip.closed).toBe(true);
    expect(calls).toBe(before + 3);
    console.info(
      `ops (${name}): unauthenticated drip POST answered ${drip.status} after ${drip.answeredAfterMs} ms`,
    );
  });

  it('answers 408 REQUEST_TIMEOUT and closes the connection for an authorized retry body not whole in time', async () => {
    const { port } = mounted;
    const page = await fetch(`http://127.0.0.1:${String(port)}/ops/api/counts`, { headers: AUTH });
    const headers = {
      ...AUTH,
      'content-type': 'application/json',
      [CSRF_HEADER]: page.headers.get(CSRF_HEADER) ?? '',
    };
    const drip = await rawRequest({
      port,
      method: 'POST',
      path: '/ops/api/retry',
      headers,
      body: '{"id":',
      drip: { chunked: true, everyMs: 200 },
    });
    expect(drip.status).toBe(408);
    expect(errorCode(drip.body)).toBe('REQUEST_TIMEOUT');
    expect(drip.closed).toBe(true);
    console.info(
      `ops (${name}): authorized drip POST answered ${drip.status} after ${drip.answeredAfterMs} ms (bodyTimeoutMs ${BODY_TIMEOUT_MS})`,
    );
    const short = await rawRequest({
      port,
      method: 'POST',
      path: '/ops/api/retry',
      headers: { ...headers, 'content-length': '100' },
      body: '{"id":"x"',
    });
    expect(short.status).toBe(408);
    expect(errorCode(short.body)).toBe('REQUEST_TIMEOUT');
    expect(short.closed).toBe(true);
  });
});
