import { createReceiver, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { createOpsHandler } from '@churn-risk/ops';
import { createRedisQueue, type RedisQueue } from '@churn-risk/redis';
import express from 'express';
import { opsAuthorize } from './ops-auth.js';

/** Options of `createWebApp`. */
export interface WebAppOptions {
  /** The webhook signing secret (`CHURN_RISK_WEBHOOK_SECRET`). */
  secret: string;
  /** Where the queue lives: a `redis://` URL (`REDIS_URL`). */
  redisUrl: string;
  /** Key prefix; `{churn-risk}` on Redis Cluster. Default `churn-risk`. */
  prefix?: string | undefined;
  /**
   * The password of the failed alerts' page at `/ops` (`OPS_PASSWORD`; user `ops`, HTTP Basic).
   * Without it the page is open to anyone who reaches it, which is accepted only while `NODE_ENV`
   * is `development` or `test`.
   */
  opsPassword?: string | undefined;
}

/** The app, its receiver (to close on SIGTERM) and the queue (for `/healthz`). */
export interface WebApp {
  app: express.Express;
  receiver: Receiver;
  queue: RedisQueue;
}

/**
 * The web process's app: verifies deliveries and records them in Redis (`consume: false`: no
 * handler runs here; worker processes run them). The `202` is written only once Redis has stored
 * the alert, so an acknowledged alert survives a crash of this process.
 */
export function createWebApp(options: WebAppOptions): WebApp {
  const queue = createRedisQueue({
    connection: options.redisUrl,
    ...(options.prefix !== undefined && { prefix: options.prefix }),
  });
  const receiver = createReceiver({ secret: options.secret, queue, consume: false });

  const app = express();
  // Before any body parser: the middleware verifies the signature over the raw bytes.
  app.post('/webhooks/churn-risk', createMiddleware(receiver));
  // For the load balancer: 200 while Redis answers, 503 while it does not (take this instance
  // out of rotation; its deliveries would be answered 503 anyway, and the service retries them).
  app.get('/healthz', async (_req, res) => {
    const health = await queue.health();
    if (health.reachable) res.json({ status: 'ok', queue: 'redis' });
    else res.status(503).json({ status: 'unavailable', queue: 'redis', error: health.error });
  });
  // The failed alerts of the queue: counts, health, the failed set, retry one or all.
  const ops = createOpsHandler({ queue, authorize: opsAuthorize(options.opsPassword) });
  app.use('/ops', (req, res) => void ops.node(req, res));
  return { app, receiver, queue };
}
