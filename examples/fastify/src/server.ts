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

const { app } = await createApp({
  secret,
  file: process.env.ALERT_LOG_FILE,
  workMs: process.env.ALERT_WORK_MS === undefined ? undefined : Number(process.env.ALERT_WORK_MS),
});

await app.listen({ port, host });
console.log(`listening on http://${host}:${(app.server.address() as AddressInfo).port}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  // Stops accepting (requests still arriving get 503), waits for in-flight requests, then the
  // plugin's onClose hook drains the receiver.
  await app.close();
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
