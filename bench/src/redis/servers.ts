/**
 * The servers of `pnpm bench redis`, one per child process (`server.ts <name> <redis URL> <prefix>`):
 * in Express and in Fastify, the receiver with the Redis queue (`consume: false`, a web process),
 * the hand-written BullMQ route it is compared with, and the default in-memory receiver. Each
 * `<name>-ours-redis-before` is that receiver on the before build's `@churn-risk/redis`, core and
 * adapter (`--before=<git-ref>`, `lib/packages.ts`).
 */
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { SECRET } from '../lib/alert.js';
import { importBefore, type PackageModules } from '../lib/packages.js';
import {
  ADAPTERS,
  expressHand,
  expressReceiver,
  fastifyHand,
  fastifyReceiver,
  type Adapters,
} from '../lib/queue-servers.js';
import type { StoreServer } from '../lib/server-child.js';
import { handBullmq } from './hand-bullmq.js';

/** Where a server's Redis work goes: the run's redis-server and this server's own key prefix. */
export interface RedisTarget {
  url: string;
  prefix: string;
}

/** A web process: accepts into Redis, runs no handlers. */
function redisReceiver({ url, prefix }: RedisTarget, packages: RedisPackages = AFTER): Receiver {
  return packages.core.createReceiver({
    secret: SECRET,
    queue: packages.redis.createRedisQueue({ connection: url, prefix }),
    consume: false,
  });
}

/** What a Redis-mode server takes from our packages: the working tree's, or the before build's. */
interface RedisPackages extends Adapters {
  core: Pick<PackageModules['@churn-risk/core'], 'createReceiver'>;
  redis: Pick<PackageModules['@churn-risk/redis'], 'createRedisQueue'>;
}

const AFTER: RedisPackages = {
  ...ADAPTERS,
  core: { createReceiver },
  redis: { createRedisQueue },
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

/** Each server: starts listening on 127.0.0.1 and resolves with its port. */
export const REDIS_SERVERS: Record<string, StoreServer> = {
  'express-hand-bullmq': (target) => expressHand(handBullmq(target.url, target.prefix)),
  'express-ours-redis': (target) => expressReceiver(redisReceiver(target)),
  'express-ours-memory': () => expressReceiver(memoryReceiver()),
  'fastify-hand-bullmq': (target) => fastifyHand(handBullmq(target.url, target.prefix)),
  'fastify-ours-redis': (target) => fastifyReceiver(redisReceiver(target)),
  'fastify-ours-memory': () => fastifyReceiver(memoryReceiver()),
  // `--before=<git-ref>`: the Redis-mode receivers on the before build's packages.
  'express-ours-redis-before': async (target) => {
    const packages = await beforePackages('express');
    return expressReceiver(redisReceiver(target, packages), packages);
  },
  'fastify-ours-redis-before': async (target) => {
    const packages = await beforePackages('fastify');
    return fastifyReceiver(redisReceiver(target, packages), packages);
  },
};
