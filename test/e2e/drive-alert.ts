import { setTimeout as delay } from 'node:timers/promises';
import { ChurnRiskClient } from '@churn-risk/core';
import type { DeliveryRecord, Sandbox } from '@churn-risk/sandbox';

/** Polls `check` every 20 ms until it returns a value; gives up after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/**
 * Through the real client: identifies `userId`, watches it (threshold 0.7) with `webhook`, then
 * sends two `payment_failed` events, which take a `pro` user with no activity from 0.35 to 0.75.
 * Resolves with the sandbox's delivery record once the receiver acknowledged it.
 */
export async function driveAlert(
  sandbox: Sandbox,
  webhook: string,
  userId: string,
): Promise<DeliveryRecord> {
  const client = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  await client.identify(userId, { plan: 'pro', mrr: 99 });
  await client.watch(userId, { threshold: 0.7, webhook, cooldown: '1h' });
  await client.trackBulk([
    { userId, event: 'payment_failed' },
    { userId, event: 'payment_failed' },
  ]);
  return eventually(
    () =>
      sandbox.deliveries
        .list()
        .find((record) => record.alert.userId === userId && record.state === 'delivered'),
    `the delivery to ${userId} to be acknowledged`,
  );
}
