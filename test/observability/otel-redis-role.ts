/**
 * One process of the Redis-mode trace test, under the OpenTelemetry SDK (in-memory exporter):
 * `web` accepts one signed delivery into the Redis queue (`consume: false`), reads the queue-depth
 * gauge (the alert waits in Redis, not in the process) and exits; `worker` registers a handler,
 * processes that alert from Redis and exits. Each prints its finished spans (and `web` the gauge's
 * points) as one JSON line. Usage: otel-redis-role.ts web|worker <REDIS_URL> <PREFIX>
 */
import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createRedisQueue } from '@churn-risk/redis';
import { installTestSdk } from './otel-test-sdk.js';
import { spanJson } from './span-json.js';

const [role, url, prefix] = process.argv.slice(2);
if (url === undefined || prefix === undefined) throw new Error('usage: web|worker <url> <prefix>');
const SECRET = 'whsec_otel_redis';
const sdk = installTestSdk();
const queue = createRedisQueue({ connection: url, prefix });
let status: number | undefined;
let depth: unknown[] | undefined;
if (role === 'web') {
  const web = createReceiver({ secret: SECRET, queue, consume: false });
  const { headers, body } = createTestDelivery(
    { userId: 'user_two_processes' },
    { secret: SECRET },
  );
  status = (await web.handle({ method: 'POST', headers, body })).status;
  await sdk.collect();
  depth = sdk.points('churn_risk.queue.depth').map((point) => point.value);
  await web.close({ timeoutMs: 10_000 });
} else {
  const worker = createReceiver({ secret: SECRET, queue });
  await new Promise<void>((resolve) => {
    worker.on('churn_risk_alert', () => {
      resolve();
    });
  });
  await worker.close({ timeoutMs: 10_000 });
}
console.log(JSON.stringify({ status, depth, spans: sdk.spans().map(spanJson) }));
await sdk.uninstall();
