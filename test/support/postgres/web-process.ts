/**
 * A web process for the Postgres tests (`serveAccepting` of ../durable-process.ts) on the Postgres
 * queue. Env: DATABASE_URL, SECRET, ENQUEUE_TIMEOUT_MS. Prints `listening on <url>`; SIGTERM
 * closes it.
 */
import { createPostgresQueue } from '@churn-risk/postgres';
import { requiredEnv, serveAccepting } from '../durable-process.js';

serveAccepting(
  createPostgresQueue({
    connection: requiredEnv('DATABASE_URL'),
    enqueueTimeoutMs: Number(process.env.ENQUEUE_TIMEOUT_MS ?? 2000),
  }),
);
