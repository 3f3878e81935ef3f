// `receiver.sweep` on a store: two sweeps at once, with an alert a dead taker left under
// an expired lease.
import { createDurableQueue } from '../processing/durable/durable-queue.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver } from '../receiver/types.js';
import type { StoreCaseKit } from './store-fixture.js';
import { SECRET, delivery, queuedAlert, same, sleep } from './support.js';

/** Registers the case of two receivers sweeping one store at once. */
export function sweepCases({ run, takeOne, leaseMs, timeout }: StoreCaseKit): void {
  run(
    "receiver.sweep: two sweeps at once run each due alert once, a dead taker's alert included",
    async (fixture) => {
      const { a, b } = fixture;
      const [first, second] = [a, b].map((store) =>
        createReceiver({
          secret: SECRET,
          queue: createDurableQueue(store, { leaseMs: 10_000 }),
          consume: false,
          concurrency: 4,
        }),
      );
      const runs = new Map<string, number>();
      const stalls: number[] = [];
      for (const receiver of [first, second] as Receiver[]) {
        fixture.receivers.push(receiver);
        receiver.on('churn_risk_alert', async (alert, context) => {
          runs.set(alert.userId, (runs.get(alert.userId) ?? 0) + 1);
          if (context.stalls > 0) stalls.push(context.stalls);
          await sleep(5);
        });
      }
      const alerts = Array.from({ length: 12 }, queuedAlert);
      for (const alert of alerts) {
        same((await (first as Receiver).handle(delivery(alert))).status, 202, 'the answer');
      }
      // A taker that dies (a frozen function): its alert is left under an expired lease.
      await takeOne(a, 'dead');
      await sleep(leaseMs + 50);
      const budgetMs = Math.max(5_000, timeout / 3);
      const results = await Promise.all(
        [first, second].map((receiver) => (receiver as Receiver).sweep({ budgetMs })),
      );
      const completed = results.reduce((sum, result) => sum + result.completed, 0);
      same(completed, 12, 'alerts completed by the two sweeps');
      same(runs.size, 12, 'alerts whose handler ran');
      same(
        [...runs.values()].filter((count) => count !== 1),
        [],
        'handler runs other than one per alert',
      );
      same(stalls, [1], 'context.stalls of the alert taken over');
      same((await a.counts()).completed, 12, 'completed in the store');
    },
  );
}
