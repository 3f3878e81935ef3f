import type { ChurnRiskClient } from '@churn-risk/core';
import type { Sandbox } from '@churn-risk/sandbox';

/** The watch threshold; a `payment_failed` takes a new `pro` user from 0.35 to 0.55. */
export const THRESHOLD = 0.5;

/** A user and the web process its watch points at. */
export interface WatchedUser {
  userId: string;
  webhook: string;
}

async function inGroups<T>(items: readonly T[], size: number, run: (item: T) => Promise<void>) {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(run));
  }
}

/**
 * Identifies `count` users (score 0.35: a `pro` plan, no activity yet) and watches each at
 * `THRESHOLD`, alternating between the webhooks (as a load balancer would spread them).
 */
export async function watchUsers(
  client: ChurnRiskClient,
  count: number,
  webhooks: readonly string[],
): Promise<WatchedUser[]> {
  const users = Array.from({ length: count }, (_, index) => ({
    userId: `user_${String(index + 1).padStart(3, '0')}`,
    webhook: webhooks[index % webhooks.length] ?? '',
  }));
  await inGroups(users, 20, async ({ userId, webhook }) => {
    await client.identify(userId, { plan: 'pro', mrr: 99 });
    await client.watch(userId, { threshold: THRESHOLD, webhook, cooldown: '24h' });
  });
  return users;
}

/**
 * One failed payment per user: each score crosses the threshold and the sandbox sends the watch's
 * signed `churn_risk_alert` to its webhook. Users go in groups of 10, each group's deliveries
 * answered before the next (alerts arrive over a while, as they would from the real service).
 */
export async function crossThreshold(
  client: ChurnRiskClient,
  sandbox: Sandbox,
  users: readonly WatchedUser[],
): Promise<void> {
  for (let start = 0; start < users.length; start += 10) {
    const events = users.slice(start, start + 10).map(({ userId }) => ({
      userId,
      event: 'payment_failed',
      properties: { amount: 99 },
    }));
    await client.trackBulk(events);
    await sandbox.deliveries.idle();
  }
}
