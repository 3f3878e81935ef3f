import { createReceiver, type Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { createPostgresQueue, type PostgresQueue } from '@churn-risk/postgres';
import express from 'express';

/** Options of `createWebApp`. */
export interface WebAppOptions {
  /** The webhook signing secret (`CHURN_RISK_WEBHOOK_SECRET`). */
  secret: string;
  /** Where the queue lives: a `postgres://` URL (`DATABASE_URL`). */
  databaseUrl: string;
  /** The schema of the queue's tables. Default `churn_risk`. */
  schema?: string | undefined;
}

/** The app, its receiver (to close on SIGTERM) and the queue (for `/healthz`). */
export interface WebApp {
  app: express.Express;
  receiver: Receiver;
  queue: PostgresQueue;
}

/**
 * The web process's app: verifies deliveries and records them in Postgres (`consume: false`: no
 * handler runs here; worker processes run them). The `202` is written only once Postgres has
 * committed the alert, so an acknowledged alert survives a crash of this process.
 */
export function createWebApp(options: WebAppOptions): WebApp {
  const queue = createPostgresQueue({
    connection: options.databaseUrl,
    ...(options.schema !== undefined && options.schema !== '' && { schema: options.schema }),
  });
  const receiver = createReceiver({ secret: options.secret, queue, consume: false });

  const app = express();
  // Before any body parser: the middleware verifies the signature over the raw bytes.
  app.post('/webhooks/churn-risk', createMiddleware(receiver));
  // For the load balancer: 200 while Postgres answers, 503 while it does not (take this instance
  // out of rotation; its deliveries would be answered 503 anyway, and the service retries them).
  app.get('/healthz', async (_req, res) => {
    const health = await queue.health();
    if (health.reachable) res.json({ status: 'ok', queue: 'postgres' });
    else res.status(503).json({ status: 'unavailable', queue: 'postgres', error: health.error });
  });
  return { app, receiver, queue };
}
