/**
 * A web process for the Redis tests (`serveAccepting` of ../durable-process.ts) on the Redis
 * queue. Env: REDIS_URL (or REDIS_CLUSTER_NODES), PREFIX, SECRET, ENQUEUE_TIMEOUT_MS. Prints
 * `listening on <url>`; SIGTERM closes it.
 */
import { createRedisQueue } from '@churn-risk/redis';
import { requiredEnv, serveAccepting } from '../durable-process.js';
import { redisConnection } from './connection.js';

serveAccepting(
  createRedisQueue({
    connection: redisConnection(),
    prefix: requiredEnv('PREFIX'),
    enqueueTimeoutMs: Number(process.env.ENQUEUE_TIMEOUT_MS ?? 2000),
  }),
);
