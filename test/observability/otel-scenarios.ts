/**
 * Runs the receiver under the OpenTelemetry SDK (in-memory span exporter, on-demand metric reader)
 * and prints what was recorded as one JSON line. A child process of `receiver-otel.test.ts`:
 * vitest runs Node with the `module` export condition, under which the OpenTelemetry packages
 * resolve to builds Node cannot load; here they load as any app loads them.
 * Usage: node --conditions=@churn-risk/source --import tsx otel-scenarios.ts
 */
import { createReceiver } from '@churn-risk/core';
import { type ReceiverRequest } from '@churn-risk/core/adapter';
import { createTestDelivery } from '@churn-risk/core/testing';
import { installTestSdk, otel, type TestSdk } from './otel-test-sdk.js';
import { spanJson as toJson } from './span-json.js';

const SECRET = 'whsec_otel_test_secret';

function delivery(userId: string, secret = SECRET): ReceiverRequest & { id: string } {
  const signed = createTestDelivery({ userId }, { secret });
  const id = `${userId}:${signed.alert.triggeredAt}`;
  return { method: 'POST', headers: signed.headers, body: signed.body, id };
}

/** Two handlers, the second failing its first try; the handler makes a span of its own. */
async function traces(sdk: TestSdk): Promise<unknown> {
  const receiver = createReceiver({ secret: SECRET, retries: { retries: 2, backoffMs: () => 0 } });
  let calls = 0;
  receiver.on('churn_risk_alert', () => undefined);
  receiver.on('churn_risk_alert', async () => {
    calls++;
    await Promise.resolve();
    if (calls === 1) throw new TypeError('first try fails');
    otel.trace.getTracer('app').startSpan('app work').end();
  });
  const request = delivery('user_traced');
  const result = await otel.trace
    .getTracer('http')
    .startActiveSpan('POST /webhooks', async (server) => {
      const answer = await receiver.handle(request);
      server.end();
      return answer;
    });
  await result.done;
  const forged = await receiver.handle(delivery('user_forged', 'wrong-secret'));
  return {
    id: request.id,
    statuses: [result.status, forged.status],
    spans: sdk.spans().map(toJson),
  };
}

/** Deliveries of every kind, then the metrics. */
async function metrics(sdk: TestSdk): Promise<unknown> {
  const receiver = createReceiver({ secret: SECRET, retries: { retries: 1, backoffMs: () => 0 } });
  let fail = true;
  receiver.on('churn_risk_alert', () => {
    if (!fail) return;
    fail = false;
    throw new Error('once');
  });
  const first = delivery('user_a');
  await (
    await receiver.handle(first)
  ).done;
  await receiver.handle(first); // a duplicate: 202 again
  await receiver.handle(delivery('user_b', 'wrong-secret'));
  await receiver.handle(delivery('user_c', 'wrong-secret'));
  await receiver.handle({ method: 'GET', headers: {}, body: null });
  await receiver.drain();
  await sdk.collect();
  const points = (name: string): unknown[] =>
    sdk.points(name).map((point) => ({ attributes: point.attributes, value: point.value }));
  const recorded = {
    deliveries: points('churn_risk.webhook.deliveries'),
    durations: points('churn_risk.alert.process.duration'),
    depth: points('churn_risk.queue.depth'),
  };
  await receiver.close();
  return {
    ...recorded,
    depthWhileBusy: await depthWhileBusy(sdk),
    superseded: await superseded(sdk, points),
  };
}

/**
 * In order per user: 10:00 runs (held), 10:09 and 10:03 arrive; 10:03 starts superseded and the
 * handler registered with `superseded: 'skip'` is not run for it (counted once).
 */
async function superseded(sdk: TestSdk, points: (name: string) => unknown[]): Promise<unknown[]> {
  const receiver = createReceiver({ secret: SECRET, order: 'per-user' });
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  receiver.on('churn_risk_alert', () => gate, { id: 'crm', superseded: 'skip' });
  for (const minute of [0, 9, 3]) {
    const triggeredAt = new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();
    const signed = createTestDelivery({ userId: 'user_s', triggeredAt }, { secret: SECRET });
    await receiver.handle({ method: 'POST', headers: signed.headers, body: signed.body });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  release();
  await receiver.drain();
  await sdk.collect();
  await receiver.close();
  return points('churn_risk.alert.superseded');
}

/** The queue-depth gauge while one alert runs and three wait, then once they are done. */
async function depthWhileBusy(sdk: TestSdk): Promise<unknown[]> {
  const receiver = createReceiver({ secret: SECRET, concurrency: 1 });
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  receiver.on('churn_risk_alert', () => gate);
  for (const user of ['busy_1', 'busy_2', 'busy_3', 'busy_4'])
    await receiver.handle(delivery(user));
  await sdk.collect();
  const busy = sdk.points('churn_risk.queue.depth').map((point) => point.value);
  release();
  await receiver.drain();
  await sdk.collect();
  const idle = sdk.points('churn_risk.queue.depth').map((point) => point.value);
  await receiver.close();
  return [busy, idle];
}

const output: Record<string, unknown> = {};
for (const [name, run] of [
  ['traces', traces],
  ['metrics', metrics],
] as const) {
  const sdk = installTestSdk();
  try {
    output[name] = await run(sdk);
  } finally {
    await sdk.uninstall();
  }
}
console.log(JSON.stringify(output));
