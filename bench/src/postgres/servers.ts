/**
 * The servers of `pnpm bench postgres`, one per child process on Node >= 22.12 (`server.ts <name>
 * <database URL> <schema>`): in Express and in Fastify, the receiver with `createPostgresQueue`
 * (`consume: false`, a web process) and the hand-written pg-boss route it is compared with.
 */
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { SECRET } from '../lib/alert.js';
import {
  expressHand,
  expressReceiver,
  fastifyHand,
  fastifyReceiver,
} from '../lib/queue-servers.js';
import type { StoreServer } from '../lib/server-child.js';
import { handPgBoss } from './hand-pgboss.js';

/** A web process: accepts into Postgres (the queue's defaults but the schema), runs no handlers. */
function postgresReceiver({ url, prefix }: { url: string; prefix: string }): Receiver {
  return createReceiver({
    secret: SECRET,
    queue: createPostgresQueue({ connection: url, schema: prefix }),
    consume: false,
  });
}

export const POSTGRES_SERVERS: Record<string, StoreServer> = {
  'express-hand-pgboss': async (target) => expressHand(await handPgBoss(target.url, target.prefix)),
  'express-ours-postgres': (target) => expressReceiver(postgresReceiver(target)),
  'fastify-hand-pgboss': async (target) => fastifyHand(await handPgBoss(target.url, target.prefix)),
  'fastify-ours-postgres': (target) => fastifyReceiver(postgresReceiver(target)),
};
