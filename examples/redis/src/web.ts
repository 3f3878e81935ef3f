/**
 * The web process: `REDIS_URL=redis://127.0.0.1:6379 CHURN_RISK_WEBHOOK_SECRET=... PORT=3000
 * pnpm web`. Accepts signed deliveries into Redis and runs no handler; serves the failed alerts'
 * page at `/ops` (`OPS_PASSWORD` protects it). Prints `ops page on http://127.0.0.1:PORT/ops` and
 * `listening on http://127.0.0.1:PORT` first. On SIGTERM (or SIGINT) it stops accepting
 * connections, answers `503 CLOSED` on the ones still open, closes the queue and exits 0.
 */
import type { AddressInfo } from 'node:net';
import { numberEnv, requireEnv } from './env.js';
import { createWebApp } from './web-app.js';

const secret = requireEnv('CHURN_RISK_WEBHOOK_SECRET', 'the webhook signing secret');
const redisUrl = requireEnv('REDIS_URL', 'the Redis URL, e.g. redis://127.0.0.1:6379');
const port = numberEnv('PORT', 3000);
const host = '127.0.0.1';

const { app, receiver } = createWebApp({
  secret,
  redisUrl,
  prefix: process.env.REDIS_PREFIX,
  opsPassword: process.env.OPS_PASSWORD,
});

const server = app.listen(port, host, () => {
  const address = server.address() as AddressInfo;
  console.log(`ops page on http://${host}:${address.port}/ops`);
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
  // Every alert answered 202 is already in Redis: closing only waits for answers being written.
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
