/**
 * Our side of `pnpm bench drain`, on any durable queue: a producing process is a web process
 * (`createReceiver` with `consume: false`) whose `handle` gets signed deliveries, as a framework
 * adapter would pass them; a consuming process is `createReceiver` with the queue, one no-op
 * handler, `consume` on (the default) and concurrency 10.
 */
import type { createReceiver as CreateReceiver } from '@churn-risk/core';
import type { AlertQueue } from '@churn-risk/core/store';
import { SECRET, signHeaders } from '../lib/alert.js';
import { CONCURRENCY, type Consumer, type Producer, type Side, type StampedAlert } from './side.js';

/** A queue as `createRedisQueue` / `createPostgresQueue` return it. */
export type OurQueue = AlertQueue & {
  health?: () => Promise<{ reachable: boolean; error?: string }>;
};

/** Core's `createReceiver` and a maker of the queue of one process (this tree's, or a before build's). */
export interface OurBuild {
  createReceiver: typeof CreateReceiver;
  makeQueue(url: string, namespace: string): OurQueue;
}

async function reachable(queue: OurQueue): Promise<void> {
  const health = await queue.health?.();
  if (health !== undefined && !health.reachable) {
    throw new Error(`the ${queue.kind} store does not answer: ${health.error ?? ''}`);
  }
}

/**
 * Our side, on the build `load` resolves with. With `users`, both processes run in order per user
 * (`order: 'per-user'`) and the alerts are spread over that many users, in turn (each alert keeps
 * its own `triggeredAt`, so its identity stays unique).
 */
export function oursSide(load: () => Promise<OurBuild>, users?: number): Side {
  const order = users === undefined ? {} : { order: 'per-user' as const };
  let sent = 0;
  return {
    async producer({ url, namespace }): Promise<Producer> {
      const { createReceiver, makeQueue } = await load();
      const queue = makeQueue(url, namespace);
      await reachable(queue);
      const receiver = createReceiver({ secret: SECRET, queue, consume: false, ...order });
      return {
        async enqueue(alert) {
          const body = JSON.stringify(
            users === undefined ? alert : { ...alert, userId: `user_${String(sent++ % users)}` },
          );
          const result = await receiver.handle({
            method: 'POST',
            headers: { 'content-type': 'application/json', ...signHeaders(body) },
            body,
          });
          if (result.status !== 202) throw new Error(`answered ${result.status}: ${result.body}`);
        },
        close: () => receiver.close(),
      };
    },
    async consumer({ url, namespace }, onStart): Promise<Consumer> {
      const { createReceiver, makeQueue } = await load();
      const queue = makeQueue(url, namespace);
      await reachable(queue); // connected before the timing starts
      let close = (): Promise<void> => queue.close();
      return {
        start() {
          const receiver = createReceiver({
            secret: SECRET,
            queue,
            concurrency: CONCURRENCY,
            ...order,
          });
          receiver.on('churn_risk_alert', (alert) => {
            onStart(alert as unknown as StampedAlert);
          });
          close = () => receiver.close();
          return Promise.resolve();
        },
        close: () => close(),
      };
    },
  };
}
