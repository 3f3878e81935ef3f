/**
 * The Express and Fastify servers of the durable-queue benchmarks (`pnpm bench redis`, `pnpm bench
 * postgres`): a hand-written route around a `HandEnqueue`, or the receiver mounted with the
 * adapter (the working tree's, or another build's under `--before`). Each listens on 127.0.0.1
 * and resolves with its port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { WEBHOOK_PATH } from './alert.js';
import { rawBodyOfAnyType } from './fastify-raw-body.js';
import type { HandEnqueue } from './hand-queue-route.js';
import type { PackageModules } from './packages.js';

/** The adapters a server mounts the receiver with. */
export interface Adapters {
  express: Pick<PackageModules['@churn-risk/express'], 'createMiddleware'>;
  fastify: Pick<PackageModules['@churn-risk/fastify'], 'churnRiskPlugin'>;
}

/** The working tree's adapters. */
export const ADAPTERS: Adapters = {
  express: { createMiddleware },
  fastify: { churnRiskPlugin },
};

const headerOf = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

function listenExpress(app: express.Express): Promise<number> {
  const server = createServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

async function listenFastify(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

/** `express.raw()` and a route that hands the body and headers to `enqueue`. */
export function expressHand(enqueue: HandEnqueue): Promise<number> {
  const app = express();
  app.post(WEBHOOK_PATH, express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
    const signature = req.get('x-service-signature');
    void enqueue(req.body, signature, req.get('x-service-timestamp')).then((answer) => {
      res.status(answer.status).json(answer.body);
    });
  });
  return listenExpress(app);
}

/** `createMiddleware(receiver)` on the webhook path. */
export function expressReceiver(
  receiver: Receiver,
  adapters: Adapters = ADAPTERS,
): Promise<number> {
  const app = express();
  app.post(WEBHOOK_PATH, adapters.express.createMiddleware(receiver));
  return listenExpress(app);
}

/** A raw-buffer body parser and a route that hands the body and headers to `enqueue`. */
export async function fastifyHand(enqueue: HandEnqueue): Promise<number> {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  rawBodyOfAnyType(app);
  app.post(WEBHOOK_PATH, async (request, reply) => {
    const { headers } = request;
    const answer = await enqueue(
      request.body,
      headerOf(headers['x-service-signature']),
      headerOf(headers['x-service-timestamp']),
    );
    return reply.code(answer.status).send(answer.body);
  });
  return listenFastify(app);
}

/** `churnRiskPlugin` with the receiver on the webhook path. */
export async function fastifyReceiver(
  receiver: Receiver,
  adapters: Adapters = ADAPTERS,
): Promise<number> {
  const app = Fastify({ logger: false });
  await app.register(adapters.fastify.churnRiskPlugin, { receiver, path: WEBHOOK_PATH });
  return listenFastify(app);
}
