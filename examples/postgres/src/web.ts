/**
 * The web process: `DATABASE_URL=postgres://user@127.0.0.1:5432/app CHURN_RISK_WEBHOOK_SECRET=...
 * PORT=3000 pnpm web`. Accepts signed deliveries into Postgres and
 * runs no handler. Prints
 * `listening on http://127.0.0.1:PORT` first. On SIGTERM (or SIGINT) it stops accepting
 * connections, answers `503 CLOSED` on the ones still open, closes the queue and exits 0.
 */
import type { AddressInfo } from 'node:net';
import { numberEnv, requireEnv } from './env.js';
import { createWebApp } from './web-app.js';

const secret = requireEnv('CHURN_RISK_WEBHOOK_SECRET', 'the webhook signing secret');
const databaseUrl = requireEnv(
  'DATABASE_URL',
  'the Postgres URL, e.g. postgres://user@127.0.0.1:5432/app',
);
const port = numberEnv('PORT', 3000);
const host = '127.0.0.1';

const { app, receiver } = createWebApp({
  secret,
  databaseUrl,
  schema: process.env.DATABASE_SCHEMA,
});

const server = app.listen(port, host, () => {
  const address = server.address() as AddressInfo;
  console.log(`listening on http://${host}:${address.port}`);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  const serverClosed = new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  server.closeIdleConnections();
  // Every alert answered 202 is committed in Postgres: closing only waits for answers being written.
  await receiver.close({ timeoutMs: 10_000 });
  await serverClosed;
  console.log('closed');
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    shutdown(signal).catch((error: unknown) => {
      console.error('shutdown failed:', error);
      process.exit(1);
    });
  });
}
