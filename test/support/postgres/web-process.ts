/**
 * A web process for the Postgres tests: a receiver that only accepts (`consume: false`) into the
 * Postgres queue, served by node:http on 127.0.0.1. Runs on Node >= 22.12 (pg-boss 12). Env:
 * DATABASE_URL, SECRET, ENQUEUE_TIMEOUT_MS. Prints `listening on <url>`; SIGTERM closes it.
 */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { createServer } from 'node:http';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};

const queue = createPostgresQueue({
  connection: env('DATABASE_URL'),
  enqueueTimeoutMs: Number(process.env.ENQUEUE_TIMEOUT_MS ?? 2000),
});
const receiver = createReceiver({ secret: env('SECRET'), queue, consume: false });
const server = createServer((req, res) => void receiver.node(req, res));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address !== null) {
    console.log(`listening on http://127.0.0.1:${address.port}`);
  }
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void receiver.close({ timeoutMs: 10_000 }).finally(() => process.exit(0));
});
