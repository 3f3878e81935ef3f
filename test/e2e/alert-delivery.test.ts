import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { ChurnRiskClient, type ChurnRiskAlert, type Receiver } from '@churn-risk/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp as createExpressApp } from '../../examples/express/src/app.js';
import { createApp as createFastifyApp } from '../../examples/fastify/src/app.js';
import { driveAlert, eventually } from './drive-alert.js';

// The whole loop over real sockets: the API client drives a user over a watch's threshold in the
// sandbox service, which signs and POSTs the alert to an example app; the adapter verifies it and
// the example's handler records it exactly once.

interface RunningExample {
  webhook: string;
  receiver: Receiver;
  alerts: ChurnRiskAlert[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const examples: Record<string, (secret: string) => Promise<RunningExample>> = {
  express: async (secret) => {
    const { app, receiver, alerts } = createExpressApp({ secret });
    const server = createServer(app);
    const url = await listen(server);
    return {
      webhook: `${url}/webhooks/churn-risk`,
      receiver,
      alerts,
      close: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await receiver.close();
      },
    };
  },
  fastify: async (secret) => {
    const { app, receiver, alerts } = await createFastifyApp({ secret });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { webhook: `${url}/webhooks/churn-risk`, receiver, alerts, close: () => app.close() };
  },
};

let sandbox: Sandbox;
let example: RunningExample | undefined;

beforeEach(async () => {
  sandbox = await createSandbox();
});

afterEach(async () => {
  await example?.close();
  example = undefined;
  await sandbox.close();
});

describe.each(Object.keys(examples))('sandbox → %s example', (name) => {
  it('delivers a signed alert that the example verifies and handles exactly once', async () => {
    example = await examples[name]!(sandbox.webhookSecret);
    const userId = `e2e_${name}`;

    const record = await driveAlert(sandbox, example.webhook, userId);
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ status: 202 });

    const handled = await eventually(
      () => (example!.alerts.length > 0 ? example!.alerts : undefined),
      'the handler to run',
    );
    await example.receiver.drain({ timeoutMs: 5000 });
    await sandbox.deliveries.idle();
    expect(handled.filter((alert) => alert.userId === userId)).toHaveLength(1);
    expect(handled[0]).toMatchObject({
      event: 'churn_risk_alert',
      userId,
      score: 0.75,
      tier: 'high',
      triggeredAt: record.alert.triggeredAt,
    });
    expect(handled[0]!.signals).toContain('payment_failed');
  });

  it('refuses the delivery when the example has another secret: 401 in the log, handler not run', async () => {
    example = await examples[name]!('whsec_some_other_secret');
    const userId = `e2e_${name}_wrong_secret`;
    const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    await client.identify(userId, { plan: 'pro', mrr: 99 });
    await client.watch(userId, { threshold: 0.7, webhook: example.webhook, cooldown: '1h' });
    await client.trackBulk([
      { userId, event: 'payment_failed' },
      { userId, event: 'payment_failed' },
    ]);
    const record = await eventually(
      () => sandbox.deliveries.list().find((entry) => entry.attempts.length > 0),
      'the first delivery attempt',
    );
    expect(record.attempts[0]).toMatchObject({ status: 401 });
    expect(record.state).toBe('pending'); // the sandbox will retry it later
    await example.receiver.drain({ timeoutMs: 5000 });
    expect(example.alerts).toHaveLength(0);
  });
});
