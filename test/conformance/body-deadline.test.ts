import type { Receiver } from '@churn-risk/core';
import { createMiddleware as expressMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { createHandler as honoHandler } from '@churn-risk/hono';
import { createMiddleware as koaMiddleware } from '@churn-risk/koa';
import { createPagesHandler } from '@churn-risk/next';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import type { NextApiRequest, NextApiResponse } from 'next';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal, rawRequest, type LocalServer } from '../support/slow-requests.js';
import { conformanceReceiver, makeAlert, signedHeaders, WEBHOOK_PATH } from './fixtures.js';

// The read deadline (`bodyTimeoutMs`) on a real listening server, in each Node mount: an unsigned
// chunked body that never ends and a body shorter than its `Content-Length` are answered
// `408 REQUEST_TIMEOUT` and the connection is closed; a signed delivery sent whole in time is
// still `202`. `receiver.fetch` does the same for a `Request` whose body stream stalls.

const BODY_TIMEOUT_MS = 1_000;

type Mounted = LocalServer;
const listening = listenLocal;

const mounts: Record<string, (receiver: Receiver) => Promise<Mounted>> = {
  'receiver.node on node:http': (receiver) =>
    listening(createServer((req, res) => void receiver.node(req, res))),
  Express: (receiver) => {
    const app = express();
    app.post(WEBHOOK_PATH, expressMiddleware(receiver));
    return listening(createServer(app));
  },
  Fastify: async (receiver) => {
    const app = Fastify();
    await app.register(churnRiskPlugin, { receiver, path: WEBHOOK_PATH });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
  },
  Koa: (receiver) => {
    const app = new Koa();
    app.use(koaMiddleware(receiver));
    const handle = app.callback();
    return listening(createServer((req, res) => void handle(req, res)));
  },
  'Hono on @hono/node-server': (receiver) => {
    const app = new Hono();
    app.post(WEBHOOK_PATH, honoHandler(receiver));
    return new Promise((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
        resolve({
          port: info.port,
          close: () =>
            new Promise((done) => {
              if ('closeAllConnections' in server) server.closeAllConnections();
              server.close(() => {
                done();
              });
            }),
        });
      });
    });
  },
  'Next.js Pages Router handler': (receiver) => {
    const handler = createPagesHandler(receiver);
    // A bare node:http server stands in for Next's API route resolver (`bodyParser: false`).
    return listening(
      createServer((req, res) => void handler(req as NextApiRequest, res as NextApiResponse)),
    );
  },
};

const errorCode = (body: string): unknown =>
  (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;

describe.each(Object.keys(mounts))('the read deadline in %s', (name) => {
  let receiver: Receiver;
  let mounted: Mounted;
  beforeAll(async () => {
    receiver = conformanceReceiver({ bodyTimeoutMs: BODY_TIMEOUT_MS });
    mounted = await (mounts[name] as (r: Receiver) => Promise<Mounted>)(receiver);
  });
  afterAll(async () => {
    await mounted.close();
    await receiver.close({ timeoutMs: 5_000 });
  });

  it('answers 408 REQUEST_TIMEOUT to an unsigned chunked body that never ends, and closes', async () => {
    const answer = await rawRequest({
      port: mounted.port,
      method: 'POST',
      path: WEBHOOK_PATH,
      headers: { 'content-type': 'application/json' },
      body: '{',
      drip: { chunked: true, everyMs: 200 },
    });
    expect(answer.status).toBe(408);
    expect(errorCode(answer.body)).toBe('REQUEST_TIMEOUT');
    expect(answer.headers.connection).toBe('close');
    expect(answer.closed).toBe(true);
    console.info(
      `receiver (${name}): drip answered ${answer.status} after ${answer.answeredAfterMs} ms (bodyTimeoutMs ${BODY_TIMEOUT_MS})`,
    );
  });

  it('answers 408 REQUEST_TIMEOUT to a body shorter than its Content-Length, and closes', async () => {
    const body = JSON.stringify(makeAlert());
    const answer = await rawRequest({
      port: mounted.port,
      method: 'POST',
      path: WEBHOOK_PATH,
      headers: { ...signedHeaders(body), 'content-length': String(body.length + 10) },
      body,
    });
    expect(answer.status).toBe(408);
    expect(errorCode(answer.body)).toBe('REQUEST_TIMEOUT');
    expect(answer.closed).toBe(true);
  });

  it('still accepts a signed delivery sent whole', async () => {
    const body = JSON.stringify(makeAlert());
    const answer = await rawRequest({
      port: mounted.port,
      method: 'POST',
      path: WEBHOOK_PATH,
      headers: { ...signedHeaders(body), 'content-length': String(body.length) },
      body,
      closeWithinMs: 100,
    });
    expect(answer.status).toBe(202);
    expect(answer.closed).toBe(false);
  });
});

describe('the read deadline in receiver.fetch', () => {
  it('answers 408 REQUEST_TIMEOUT to a Request whose body stream stalls, and cancels it', async () => {
    const receiver = conformanceReceiver({ bodyTimeoutMs: BODY_TIMEOUT_MS });
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"event":'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request(`http://receiver.test${WEBHOOK_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ error: { code: 'REQUEST_TIMEOUT' } });
    expect(cancelled).toBe(true);
    await receiver.close({ timeoutMs: 5_000 });
  });

  it('refuses a bodyTimeoutMs that is not a whole number of at least 1 with a TypeError', () => {
    for (const bodyTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => conformanceReceiver({ bodyTimeoutMs })).toThrow(TypeError);
      expect(() => conformanceReceiver({ bodyTimeoutMs })).toThrow(/bodyTimeoutMs/);
    }
  });
});
