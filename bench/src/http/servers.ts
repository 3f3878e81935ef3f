/**
 * The HTTP servers compared by the HTTP benchmark, one per child process (`server.ts <name>`).
 * Every "ours" server uses a default receiver (async mode, dedupe on) with one no-op handler, so
 * the number is the cost of receiving, verifying, parsing, deduplicating and enqueueing a delivery.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { createRouteHandler } from '@churn-risk/next';
import { webRequestListener } from '../../../test/support/web-bridge.js';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { handVerified } from '../lib/hand-check.js';

const ACCEPTED = { received: true };

function receiver(): Receiver {
  const r = createReceiver({ secret: SECRET });
  r.on('churn_risk_alert', () => undefined);
  return r;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

const headerOf = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** A plain node:http server that turns each request into a Web `Request` for a route handler. */
function webServer(handler: (request: Request) => Promise<Response>): Server {
  return createServer(webRequestListener(handler));
}

export const SERVERS: Record<string, () => Promise<number>> = {
  'express-bare': () => {
    const app = express();
    app.post(WEBHOOK_PATH, express.json(), (_req, res) => {
      res.status(202).json(ACCEPTED);
    });
    return listen(createServer(app));
  },
  'express-hand': () => {
    const app = express();
    app.post(WEBHOOK_PATH, express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
      if (handVerified(req.body, req.get('x-service-signature'), req.get('x-service-timestamp'))) {
        res.status(202).json(ACCEPTED);
      } else res.status(401).json({ error: { code: 'INVALID_SIGNATURE', message: 'no' } });
    });
    return listen(createServer(app));
  },
  'express-ours': () => {
    const app = express();
    app.post(WEBHOOK_PATH, createMiddleware(receiver()));
    return listen(createServer(app));
  },
  'fastify-bare': async () => {
    const app = Fastify({ logger: false });
    app.post(WEBHOOK_PATH, async (_request, reply) => reply.code(202).send(ACCEPTED));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  },
  'fastify-hand': async () => {
    const app = Fastify({ logger: false });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
      done(null, body);
    });
    app.post(WEBHOOK_PATH, async (request, reply) => {
      const { headers } = request;
      const ok = handVerified(
        request.body,
        headerOf(headers['x-service-signature']),
        headerOf(headers['x-service-timestamp']),
      );
      if (ok) return reply.code(202).send(ACCEPTED);
      return reply.code(401).send({ error: { code: 'INVALID_SIGNATURE', message: 'no' } });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  },
  'fastify-ours': async () => {
    const app = Fastify({ logger: false });
    await app.register(churnRiskPlugin, { receiver: receiver(), path: WEBHOOK_PATH });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  },
  'next-bare': () =>
    listen(
      webServer(async (request) => {
        await request.json();
        return Response.json(ACCEPTED, { status: 202 });
      }),
    ),
  'next-ours': () => listen(webServer(createRouteHandler(receiver()))),
};
