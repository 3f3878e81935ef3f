import { ChurnRiskClient, churnRiskAlertSchema, verifySignature } from '@churn-risk/core';
import {
  createManualClock,
  createSandbox,
  type ManualClock,
  type Sandbox,
} from '@churn-risk/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { runTimers } from './helpers/run-timers.js';
import { startReceiver, type TestReceiver } from './helpers/webhook-receiver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
let sandbox: Sandbox | undefined;
let receiver: TestReceiver | undefined;

afterEach(async () => {
  await sandbox?.close();
  await receiver?.close();
  sandbox = receiver = undefined;
});

/** A sandbox on a manual clock, a receiver answering `statusFor`, and a user driven above 0.7 once. */
async function setUp(
  statusFor: (n: number) => number,
): Promise<{ clock: ManualClock; sandbox: Sandbox; receiver: TestReceiver }> {
  const clock = createManualClock();
  sandbox = await createSandbox({ clock });
  receiver = await startReceiver(statusFor, clock.now);
  const client = new ChurnRiskClient({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.url,
    maxRetries: 0,
  });
  await client.watch('u1', { threshold: 0.7, webhook: receiver.url, cooldown: '24h' });
  await client.trackBulk(
    ['login', 'payment_failed', 'payment_failed', 'plan_downgraded', 'support_ticket_opened'].map(
      (event) => ({ userId: 'u1', event }),
    ),
  );
  await sandbox.deliveries.idle();
  return { clock, sandbox, receiver };
}

describe('webhook deliveries', () => {
  it('delivers a signed churn_risk_alert with the documented headers', async () => {
    const { clock, sandbox, receiver } = await setUp(() => 202);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request!.headers['content-type']).toBe('application/json');
    const alert = churnRiskAlertSchema.parse(JSON.parse(request!.body));
    expect(alert).toEqual({
      event: 'churn_risk_alert',
      userId: 'u1',
      score: 0.75,
      tier: 'high',
      signals: ['payment_failed', 'plan_downgraded', 'support_ticket_opened'],
      recommendation: expect.stringContaining('Payment failed') as string,
      triggeredAt: new Date(clock.now()).toISOString(),
    });
    expect(() =>
      verifySignature({
        body: request!.body,
        signature: request!.headers['x-service-signature'],
        timestamp: request!.headers['x-service-timestamp'],
        secret: sandbox.webhookSecret,
        now: clock.now(),
      }),
    ).not.toThrow();
    const [record] = sandbox.deliveries.list();
    expect(record).toMatchObject({
      state: 'delivered',
      nextAttemptAt: null,
      webhook: receiver.url,
      alert,
    });
    expect(record!.attempts).toEqual([
      { at: new Date(clock.now()).toISOString(), status: 202, durationMs: 0 },
    ]);
  });

  it('retries a 500 after 1 minute; the log shows both tries; signatures verify; body identical, timestamp new', async () => {
    const { clock, sandbox, receiver } = await setUp((n) => (n === 0 ? 500 : 202));
    const start = clock.now();
    expect(sandbox.deliveries.list()[0]).toMatchObject({
      state: 'pending',
      nextAttemptAt: new Date(start + MIN).toISOString(),
    });
    await runTimers(clock, sandbox);
    expect(receiver.received.map((r) => r.at - start)).toEqual([0, MIN]);
    const [first, second] = receiver.received;
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-service-timestamp']).toBe(String((start + MIN) / 1000));
    expect(first!.headers['x-service-timestamp']).toBe(String(start / 1000));
    for (const request of receiver.received) {
      verifySignature({
        body: request.body,
        signature: request.headers['x-service-signature'],
        timestamp: request.headers['x-service-timestamp'],
        secret: sandbox.webhookSecret,
        now: request.at,
      });
    }
    const [record] = sandbox.deliveries.list();
    expect(record!.state).toBe('delivered');
    expect(record!.attempts.map((a) => [a.at, a.status])).toEqual([
      [new Date(start).toISOString(), 500],
      [new Date(start + MIN).toISOString(), 202],
    ]);
  });

  it('follows the whole 72-hour schedule, then marks the delivery failed', async () => {
    const { clock, sandbox, receiver } = await setUp(() => 503);
    const start = clock.now();
    await runTimers(clock, sandbox);
    const minutes = [0, 1, 3, 7, 15, 31, 63, 127, 255, 511];
    for (let t = 511 + 360; t <= 72 * 60; t += 360) minutes.push(t);
    expect(minutes.at(-1)).toBe(4111);
    expect(receiver.received.map((r) => (r.at - start) / MIN)).toEqual(minutes);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-timestamp'])).size).toBe(
      minutes.length,
    );
    const [record] = sandbox.deliveries.list();
    expect(record).toMatchObject({ state: 'failed', nextAttemptAt: null });
    expect(record!.attempts).toHaveLength(minutes.length);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('counts a receiver that does not answer within 10 s as a failed try', async () => {
    const clock = createManualClock();
    sandbox = await createSandbox({ clock });
    const hanging = await import('node:http').then(({ createServer }) =>
      createServer(() => undefined),
    );
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const { port } = hanging.address() as { port: number };
    try {
      const client = new ChurnRiskClient({
        apiKey: sandbox.apiKey,
        baseUrl: sandbox.url,
        maxRetries: 0,
      });
      await client.watch('u2', {
        threshold: 0.3,
        webhook: `http://127.0.0.1:${port}/hook`,
        cooldown: '1h',
      });
      const arrived = new Promise<void>((resolve) => hanging.once('request', () => resolve()));
      await client.identify('u2', { plan: 'pro' });
      expect(sandbox.deliveries.list()[0]!.attempts).toHaveLength(0);
      // Wait for the request to reach the server, then let 10 s pass on the sandbox's clock.
      await arrived;
      clock.advance(10_000);
      await sandbox.deliveries.idle();
      const [record] = sandbox.deliveries.list();
      expect(record!.attempts).toEqual([
        expect.objectContaining({ error: 'timed out after 10000 ms', durationMs: 10_000 }),
      ]);
      expect(record!.nextAttemptAt).toBe(new Date(clock.now() - 10_000 + MIN).toISOString());
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it('shows the log at GET /v1/deliveries (authenticated)', async () => {
    const { sandbox } = await setUp(() => 200);
    const unauthorised = await fetch(`${sandbox.url}/v1/deliveries`);
    expect(unauthorised.status).toBe(401);
    const response = await fetch(`${sandbox.url}/v1/deliveries`, {
      headers: { authorization: `Bearer ${sandbox.apiKey}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { deliveries: unknown[] };
    expect(body.deliveries).toEqual(sandbox.deliveries.list());
    expect(body.deliveries).toHaveLength(1);
  });

  it('close() stops pending retries', async () => {
    const { clock, sandbox: running, receiver } = await setUp(() => 500);
    expect(clock.pendingTimers()).toBe(1);
    await running.close();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(HOUR);
    expect(receiver.received).toHaveLength(1);
    expect(running.deliveries.list()[0]!.state).toBe('pending');
  });
});

describe('many tries in flight at once', () => {
  it('emits no MaxListenersExceededWarning (each try listens for the sandbox closing)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      const clock = createManualClock();
      sandbox = await createSandbox({ clock });
      receiver = await startReceiver(() => 202, clock.now);
      const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
      const users = Array.from({ length: 20 }, (_, i) => `many_${i}`);
      for (const userId of users) {
        await client.watch(userId, { threshold: 0.7, webhook: receiver.url, cooldown: '24h' });
      }
      // One bulk request drives every user over the threshold: 20 tries start together.
      await client.trackBulk(
        users.flatMap((userId) =>
          [
            'login',
            'payment_failed',
            'payment_failed',
            'plan_downgraded',
            'support_ticket_opened',
          ].map((event) => ({ userId, event })),
        ),
      );
      await sandbox.deliveries.idle();
      expect(receiver.received).toHaveLength(20);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
