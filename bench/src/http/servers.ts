/**
 * The HTTP servers compared by the HTTP benchmark, one per child process (`server.ts <name>`).
 * Every "ours" server uses a default receiver (async mode, dedupe on) with one no-op handler, so
 * the number is the cost of receiving, verifying, parsing, deduplicating and enqueueing a delivery.
 * Each `<name>-ours-before` is the same server on the core and adapter of the before build
 * (`--before=<git-ref>`, `lib/packages.ts`).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { createRouteHandler } from '@churn-risk/next';
import { importBefore, type PackageModules } from '../lib/packages.js';
import { webRequestListener } from '../../../test/support/web-bridge.js';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { rawBodyOfAnyType } from '../lib/fastify-raw-body.js';
import { handVerified } from '../lib/hand-check.js';
import { HONO_SERVERS } from './hono-servers.js';
import { KOA_SERVERS } from './koa-servers.js';

const ACCEPTED = { received: true };
const ACCEPTED_JSON = JSON.stringify(ACCEPTED);
const JSON_HEADERS = { 'content-type': 'application/json' };

type Core = Pick<PackageModules['@churn-risk/core'], 'createReceiver'>;

/** The default receiver with a no-op handler, of the working tree's core or of another build's. */
function receiver(core: Core = { createReceiver }): Receiver {
  const r = core.createReceiver({ secret: SECRET });
  r.on('churn_risk_alert', () => undefined);
  return r;
}

/** The before build's core (see `lib/packages.ts`). */
const beforeCore = (): Promise<Core> => importBefore('@churn-risk/core');

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

/** The whole body of a node:http request. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

/** `@octokit/webhooks` logs every refused delivery; the check sends one on purpose. */
const quietLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

// Our servers, given the receiver and the adapter module (the working tree's or the before build's).

function expressOurs(
  r: Receiver,
  adapter: Pick<PackageModules['@churn-risk/express'], 'createMiddleware'>,
): Promise<number> {
  const app = express();
  app.post(WEBHOOK_PATH, adapter.createMiddleware(r));
  return listen(createServer(app));
}

async function fastifyOurs(
  r: Receiver,
  adapter: Pick<PackageModules['@churn-risk/fastify'], 'churnRiskPlugin'>,
): Promise<number> {
  const app = Fastify({ logger: false });
  await app.register(adapter.churnRiskPlugin, { receiver: r, path: WEBHOOK_PATH });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

function nodeOurs({ node }: Receiver): Promise<number> {
  return listen(createServer((req, res) => void node(req, res)));
}

function nextOurs(
  r: Receiver,
  adapter: Pick<PackageModules['@churn-risk/next'], 'createRouteHandler'>,
): Promise<number> {
  return listen(webServer(adapter.createRouteHandler(r)));
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
  'express-ours': () => expressOurs(receiver(), { createMiddleware }),
  'fastify-bare': async () => {
    const app = Fastify({ logger: false });
    app.post(WEBHOOK_PATH, async (_request, reply) => reply.code(202).send(ACCEPTED));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  },
  'fastify-hand': async () => {
    const app = Fastify({ logger: false });
    app.removeAllContentTypeParsers();
    rawBodyOfAnyType(app);
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
  'fastify-ours': () => fastifyOurs(receiver(), { churnRiskPlugin }),
  'node-bare': () =>
    listen(
      createServer((req, res) => {
        readBody(req).then(
          (body) => {
            JSON.parse(body.toString('utf8'));
            res.writeHead(202, JSON_HEADERS).end(ACCEPTED_JSON);
          },
          () => res.destroy(),
        );
      }),
    ),
  'node-octokit': () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quietLog });
    webhooks.on('ping', () => undefined);
    const middleware = createNodeMiddleware(webhooks, { path: WEBHOOK_PATH, log: quietLog });
    return listen(createServer((req, res) => void middleware(req, res)));
  },
  'node-ours': () => nodeOurs(receiver()),
  'next-hand': () =>
    listen(
      webServer(async (request) => {
        const body = Buffer.from(await request.arrayBuffer());
        const { headers } = request;
        const ok = handVerified(
          body,
          headers.get('x-service-signature') ?? undefined,
          headers.get('x-service-timestamp') ?? undefined,
        );
        return ok
          ? Response.json(ACCEPTED, { status: 202 })
          : Response.json({ error: { code: 'INVALID_SIGNATURE', message: 'no' } }, { status: 401 });
      }),
    ),
  'next-bare': () =>
    listen(
      webServer(async (request) => {
        await request.json();
        return Response.json(ACCEPTED, { status: 202 });
      }),
    ),
  'next-ours': () => nextOurs(receiver(), { createRouteHandler }),
  'express-ours-before': async () =>
    expressOurs(receiver(await beforeCore()), await importBefore('@churn-risk/express')),
  'fastify-ours-before': async () =>
    fastifyOurs(receiver(await beforeCore()), await importBefore('@churn-risk/fastify')),
  'node-ours-before': async () => nodeOurs(receiver(await beforeCore())),
  'next-ours-before': async () =>
    nextOurs(receiver(await beforeCore()), await importBefore('@churn-risk/next')),
  ...HONO_SERVERS,
  ...KOA_SERVERS,
};
