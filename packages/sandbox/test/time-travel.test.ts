import { createServer } from 'node:net';
import { ChurnRiskClient, ServiceError } from '@churn-risk/core';
import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { SandboxClient } from '@churn-risk/sandbox/client';
import { afterEach, describe, expect, it } from 'vitest';

const MIN = 60_000;
const HOUR = 60 * MIN;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** A loopback URL where nothing listens: a receiver that is down (connection refused). */
async function downWebhook(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/webhooks/churn-risk`;
}

function clients(running: Sandbox): { api: ChurnRiskClient; client: SandboxClient } {
  return {
    api: new ChurnRiskClient({ apiKey: running.apiKey, baseUrl: running.url, maxRetries: 0 }),
    client: new SandboxClient({ baseUrl: running.url, apiKey: running.apiKey, timeoutMs: 60_000 }),
  };
}

describe('time travel: POST /v1/sandbox/clock', () => {
  it('answers 409 CONFLICT on the system clock, and GET says which clock runs', async () => {
    sandbox = await createSandbox();
    const { client } = clients(sandbox);
    expect(sandbox.clockMode).toBe('system');
    expect((await client.getClock()).mode).toBe('system');
    const error = await client.advanceClock(MIN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 409, code: 'CONFLICT' });
    await expect(sandbox.advanceClock(MIN)).rejects.toThrow(TypeError);
  });

  it('refuses an advance that is not a whole number of ms from 0 to a year (400)', async () => {
    sandbox = await createSandbox({ clock: createManualClock() });
    const start = sandbox.clock.now();
    for (const body of [
      '{"advanceMs":-1}',
      '{"advanceMs":1.5}',
      '{"advanceMs":"60000"}',
      '{}',
      '{"advanceMs":1,"x":1}',
    ]) {
      const response = await fetch(`${sandbox.url}/v1/sandbox/clock`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
    }
    expect(sandbox.clock.now()).toBe(start);
  });

  it('advancing 72 h plays out the whole retry schedule (20 tries) against a receiver that is down', async () => {
    sandbox = await createSandbox({ clock: createManualClock() });
    const { api, client } = clients(sandbox);
    const start = sandbox.clock.now();
    await api.watch('down_user', { threshold: 0.7, webhook: await downWebhook(), cooldown: '1h' });
    await api.trackBulk(
      ['payment_failed', 'payment_failed', 'plan_downgraded'].map((event) => ({
        userId: 'down_user',
        event,
      })),
    );
    await sandbox.deliveries.idle();
    expect(sandbox.deliveries.list()[0]!.attempts).toHaveLength(1);

    const state = await client.advanceClock(72 * HOUR);
    expect(state).toEqual({ mode: 'manual', now: new Date(start + 72 * HOUR).toISOString() });
    const [record] = await client.listDeliveries({ userId: 'down_user' });
    const minutes = [0, 1, 3, 7, 15, 31, 63, 127, 255, 511];
    for (let t = 511 + 360; t <= 72 * 60; t += 360) minutes.push(t);
    expect(minutes).toHaveLength(20);
    expect(record!.attempts.map((a) => (Date.parse(a.at) - start) / MIN)).toEqual(minutes);
    expect(record!.attempts.every((a) => a.status === undefined && a.error !== undefined)).toBe(
      true,
    );
    expect(record).toMatchObject({ state: 'failed', nextAttemptAt: null });
  });

  it('moves score recency: a user idle for 8 days is rescored and crosses its watch', async () => {
    sandbox = await createSandbox({ clock: createManualClock() });
    const { api, client } = clients(sandbox);
    await api.identify('idle_user', { plan: 'pro' });
    await api.track({ userId: 'idle_user', event: 'login' });
    await api.watch('idle_user', { threshold: 0.25, webhook: await downWebhook(), cooldown: '1h' });
    expect((await api.getRiskScore('idle_user')).score).toBe(0.1);
    await client.advanceClock(8 * 24 * HOUR);
    expect(await api.getRiskScore('idle_user')).toMatchObject({
      score: 0.25,
      signals: ['inactive_7d'],
    });
    const [record] = await client.listDeliveries({ userId: 'idle_user' });
    expect(record!.alert).toMatchObject({
      score: 0.25,
      triggeredAt: new Date(sandbox.clock.now()).toISOString(),
    });
  });
});
