/**
 * The servers of `pnpm bench redis`, one per child process (`server.ts <name> <redis URL> <prefix>`):
 * in Express and in Fastify, the receiver with the Redis queue (`consume: false`, a web process),
 * the hand-written BullMQ route it is compared with, and the default in-memory receiver. Each
 * `<name>-ours-redis-before` is that receiver on the before build's `@churn-risk/redis`, core and
 * adapter (`--before=<git-ref>`, `lib/packages.ts`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { createRedisQueue } from '@churn-risk/redis';
import { Redis } from 'ioredis';
import { SECRET, WEBHOOK_PATH } from '../lib/alert.js';
import { rawBodyOfAnyType } from '../lib/fastify-raw-body.js';
import { importBefore, type PackageModules } from '../lib/packages.js';
import { handEnqueue } from './hand-bullmq.js';

/** Where a server's Redis work goes: the run's redis-server and this server's own key prefix. */
export interface RedisTarget {
  url: string;
  prefix: string;
}

/**
 * A web process: accepts into Redis, runs no handlers. `autoPipelining`: the connection is an
 * ioredis instance made here with the accepting client's settings plus `enableAutoPipelining`.
 */
function redisReceiver(
  { url, prefix }: RedisTarget,
  autoPipelining = false,
  packages: RedisPackages = AFTER,
): Receiver {
  const connection = autoPipelining
    ? new Redis(url, {
        enableAutoPipelining: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
      })
    : url;
  return packages.core.createReceiver({
    secret: SECRET,
    queue: packages.redis.createRedisQueue({ connection, prefix }),
    consume: false,
  });
}

/** What a Redis-mode server takes from our packages: the working tree's, or the before build's. */
interface RedisPackages {
  core: Pick<PackageModules['@churn-risk/core'], 'createReceiver'>;
  redis: Pick<PackageModules['@churn-risk/redis'], 'createRedisQueue'>;
  express: Pick<PackageModules['@churn-risk/express'], 'createMiddleware'>;
  fastify: Pick<PackageModules['@churn-risk/fastify'], 'churnRiskPlugin'>;
}

const AFTER: RedisPackages = {
  core: { createReceiver },
  redis: { createRedisQueue },
  express: { createMiddleware },
  fastify: { churnRiskPlugin },
};

/** The before build's packages (`--before=<git-ref>`); the adapter of the other framework is not loaded. */
async function beforePackages(framework: 'express' | 'fastify'): Promise<RedisPackages> {
  const [core, redis] = [
    await importBefore('@churn-risk/core'),
    await importBefore('@churn-risk/redis'),
  ];
  return framework === 'express'
    ? { ...AFTER, core, redis, express: await importBefore('@churn-risk/express') }
    : { ...AFTER, core, redis, fastify: await importBefore('@churn-risk/fastify') };
}

/** The default receiver (in-memory queue and dedupe) with one no-op handler, as in `bench http`. */
function memoryReceiver(): Receiver {
  return createReceiver({ secret: SECRET }).on('churn_risk_alert', () => undefined);
}

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

function expressHand(target: RedisTarget): Promise<number> {
  const enqueue = handEnqueue(target.url, target.prefix);
  const app = express();
  app.post(WEBHOOK_PATH, express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
    const signature = req.get('x-service-signature');
    void enqueue(req.body, signature, req.get('x-service-timestamp')).then((answer) => {
      res.status(answer.status).json(answer.body);
    });
  });
  return listenExpress(app);
}

function expressReceiver(receiver: Receiver, packages: RedisPackages = AFTER): Promise<number> {
  const app = express();
  app.post(WEBHOOK_PATH, packages.express.createMiddleware(receiver));
  return listenExpress(app);
}

async function fastifyHand(target: RedisTarget, autoPipelining = false): Promise<number> {
  const enqueue = handEnqueue(target.url, target.prefix, autoPipelining);
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

async function fastifyReceiver(
  receiver: Receiver,
  packages: RedisPackages = AFTER,
): Promise<number> {
  const app = Fastify({ logger: false });
  await app.register(packages.fastify.churnRiskPlugin, { receiver, path: WEBHOOK_PATH });
  return listenFastify(app);
}

/** Each server: starts listening on 127.0.0.1 and resolves with its port. */
export const REDIS_SERVERS: Record<string, (target: RedisTarget) => Promise<number>> = {
  'express-hand-bullmq': expressHand,
  'express-ours-redis': (target) => expressReceiver(redisReceiver(target)),
  'express-ours-memory': () => expressReceiver(memoryReceiver()),
  'fastify-hand-bullmq': fastifyHand,
  'fastify-ours-redis': (target) => fastifyReceiver(redisReceiver(target)),
  'fastify-ours-memory': () => fastifyReceiver(memoryReceiver()),
  // `--before=<git-ref>`: the Redis-mode receivers on the before build's packages.
  'express-ours-redis-before': async (target) => {
    const packages = await beforePackages('express');
    return expressReceiver(redisReceiver(target, false, packages), packages);
  },
  'fastify-ours-redis-before': async (target) => {
    const packages = await beforePackages('fastify');
    return fastifyReceiver(redisReceiver(target, false, packages), packages);
  },
  // Explorations, not in `pnpm bench redis`: both sides with ioredis auto-pipelining.
  'fastify-hand-bullmq-autopipe': (target) => fastifyHand(target, true),
  'fastify-ours-redis-autopipe': (target) => fastifyReceiver(redisReceiver(target, true)),
};
