import { ChurnRiskClient } from '@churn-risk/core';
import {
  createManualClock,
  createSandbox,
  type ManualClock,
  type Sandbox,
} from '@churn-risk/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReceiver, type TestReceiver } from './helpers/webhook-receiver.js';

const HOUR = 3_600_000;
let clock: ManualClock;
let sandbox: Sandbox;
let receiver: TestReceiver;
let client: ChurnRiskClient;

beforeEach(async () => {
  clock = createManualClock();
  sandbox = await createSandbox({ clock });
  receiver = await startReceiver(() => 200, clock.now);
  client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
});

afterEach(async () => {
  await sandbox.close();
  await receiver.close();
});

const alertScores = (): number[] =>
  receiver.received.map((r) => (JSON.parse(r.body) as { score: number }).score);
const send = async (event: string): Promise<void> => {
  await client.track({ userId: 'u1', event });
  await sandbox.deliveries.idle();
};
describe('watches and alerts', () => {
  it('alerts once when the score crosses the threshold upwards, not while it stays above', async () => {
    await client.identify('u1', { plan: 'pro', mrr: 99 });
    await client.watch('u1', { threshold: 0.7, webhook: receiver.url, cooldown: '24h' });
    await send('payment_failed'); // 0.55
    expect(receiver.received).toHaveLength(0);
    await send('payment_failed'); // 0.75: crossing
    expect(alertScores()).toEqual([0.75]);
    await send('plan_downgraded'); // 0.9: still above, no new crossing
    expect(alertScores()).toEqual([0.75]);
  });

  it('fires at exactly the threshold', async () => {
    await client.watch('u1', { threshold: 0.55, webhook: receiver.url, cooldown: '1h' });
    await client.identify('u1', { plan: 'pro' }); // 0.35: new user, below
    await send('payment_failed'); // 0.55
    expect(alertScores()).toEqual([0.55]);
  });

  it('suppresses a crossing inside the cooldown and allows one after it', async () => {
    await client.watch('u1', { threshold: 0.3, webhook: receiver.url, cooldown: '24h' });
    await send('login'); // 0.1
    await send('payment_failed'); // 0.3: alert
    expect(receiver.received).toHaveLength(1);
    clock.advance(31 * 24 * HOUR); // payment_failed leaves its 30-day window
    await send('login'); // 0.1: below
    await send('seat_removed');
    await send('seat_removed');
    await send('seat_removed');
    await send('seat_removed'); // 0.3: crossing, 31 days after the first alert: allowed
    expect(receiver.received).toHaveLength(2);
    // A second crossing within 24 h of that alert is held.
    clock.advance(HOUR);
    await client.identify('u1', { plan: 'enterprise' }); // 0.2: below
    await client.identify('u1', { plan: 'pro' }); // 0.3: crossing, in cooldown
    await sandbox.deliveries.idle();
    expect(receiver.received).toHaveLength(2);
    clock.advance(24 * HOUR);
    await client.identify('u1', { plan: 'enterprise' });
    await client.identify('u1', { plan: 'pro' }); // crossing after the cooldown
    await sandbox.deliveries.idle();
    expect(receiver.received).toHaveLength(3);
  });

  it('does not alert when the watch is registered on a user already above the threshold', async () => {
    for (const event of ['payment_failed', 'payment_failed']) await send(event); // 0.75
    await client.watch('u1', { threshold: 0.7, webhook: receiver.url, cooldown: '1h' });
    await send('support_ticket_opened'); // 0.85
    expect(receiver.received).toHaveLength(0);
  });

  it('replaces a watch with PUT and stops alerts after DELETE', async () => {
    const other = await startReceiver(() => 200, clock.now);
    try {
      await client.watch('u1', { threshold: 0.7, webhook: receiver.url, cooldown: '1h' });
      const replaced = await client.watch('u1', {
        threshold: 0.5,
        webhook: other.url,
        cooldown: '2h',
      });
      expect(replaced).toEqual({
        userId: 'u1',
        threshold: 0.5,
        webhook: other.url,
        cooldown: '2h',
      });
      await send('payment_failed'); // 0.55
      expect(receiver.received).toHaveLength(0);
      expect(other.received).toHaveLength(1);
      await client.unwatch('u1');
      await client.identify('u1', { plan: 'enterprise' }); // 0.45: below
      await client.identify('u1', { plan: 'pro' }); // 0.55: crossing, but no watch
      await sandbox.deliveries.idle();
      expect(other.received).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});
