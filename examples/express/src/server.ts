/**
 * Runs the example: `CHURN_RISK_WEBHOOK_SECRET=... PORT=3000 pnpm start`. Prints
 * `listening on http://127.0.0.1:PORT` first. On SIGTERM (or SIGINT) it stops accepting
 * connections, lets in-flight alerts finish, then exits 0.
 */
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';

const secret = process.env.CHURN_RISK_WEBHOOK_SECRET;
if (secret === undefined || secret === '') {
  console.error('Set CHURN_RISK_WEBHOOK_SECRET to the webhook signing secret.');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

const { app, receiver } = createApp({
  secret,
  file: process.env.ALERT_LOG_FILE,
  workMs: process.env.ALERT_WORK_MS === undefined ? undefined : Number(process.env.ALERT_WORK_MS),
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
  // Stop accepting connections; deliveries still arriving on open ones get 503 CLOSED.
  const serverClosed = new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  server.closeIdleConnections();
  await receiver.close({ timeoutMs: 30_000 });
  await serverClosed;
  console.log('drained');
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
