import { createReceiver, type Receiver } from '@churn-risk/core';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisQueue, type RedisQueue } from '../src/index.js';
import { startRedisCluster, type RedisCluster } from '../src/testing.js';
import { deliveryOf, makeAlert, SECRET } from './helpers.js';

// On a real three-master Redis Cluster (redis-server --cluster-enabled yes, joined with
// redis-cli --cluster create), an ioredis Cluster connection works for dedupe, the atomic accept,
// workers, retries and the failed set.

let cluster: RedisCluster;
let prefixSeq = 0;
const open: { receivers: Receiver[]; queues: RedisQueue[]; clusters: Cluster[] } = {
  receivers: [],
  queues: [],
  clusters: [],
};

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster.stop();
});
afterEach(async () => {
  await Promise.all(open.receivers.splice(0).map((r) => r.close({ timeoutMs: 10_000 })));
  await Promise.all(open.queues.splice(0).map((q) => q.close()));
  await Promise.all(open.clusters.splice(0).map((c) => c.quit().catch(() => c.disconnect())));
});

function clusterConnection(): Cluster {
  const connection = new Cluster(cluster.nodes);
  open.clusters.push(connection);
  return connection;
}
function queueOn(prefix: string): RedisQueue {
  const queue = createRedisQueue({ connection: clusterConnection(), prefix, leaseMs: 5000 });
  open.queues.push(queue);
  return queue;
}
function receiverOn(
  queue: RedisQueue,
  options: Partial<Parameters<typeof createReceiver>[0]> = {},
): Receiver {
  const receiver = createReceiver({ secret: SECRET, queue, retries: 0, ...options });
  open.receivers.push(receiver);
  return receiver;
}
const newPrefix = (): string => `{c${process.pid}-${++prefixSeq}}`;

describe('createRedisQueue on a three-master Redis Cluster', () => {
  it('the cluster has three masters, and the queue connects to them (not to 127.0.0.1:6379)', async () => {
    expect(cluster.nodes).toHaveLength(3);
    const queue = queueOn(newPrefix());
    expect(await queue.health()).toEqual({ reachable: true });
  });

  it('accepts atomically, shares dedupe between instances, and a worker runs the handler', async () => {
    const prefix = newPrefix();
    const web = receiverOn(queueOn(prefix), { consume: false });
    const other = receiverOn(queueOn(prefix), { consume: false });
    const queue = queueOn(prefix);
    const worker = receiverOn(queue);
    const ran: string[] = [];
    worker.on('churn_risk_alert', (alert) => {
      ran.push(alert.userId);
    });
    const alert = makeAlert();
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);
    const again = await other.handle(deliveryOf(alert));
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    await worker.drain({ timeoutMs: 15_000 });
    expect(ran).toEqual([alert.userId]);
    expect(await queue.counts()).toMatchObject({ completed: 1, failed: 0 });
  });

  it('retries as delayed jobs, keeps the record of handlers, fails after the last try, and retries from the failed set', async () => {
    const queue = queueOn(newPrefix());
    const worker = receiverOn(queue, { retries: { retries: 1, backoffMs: () => 20 } });
    let broken = true;
    const calls = { audit: 0, crm: 0 };
    worker.on(
      'churn_risk_alert',
      () => {
        calls.audit++;
      },
      { id: 'audit' },
    );
    worker.on(
      'churn_risk_alert',
      () => {
        calls.crm++;
        if (broken) throw new Error('CRM down');
      },
      { id: 'crm' },
    );
    const reported: string[] = [];
    worker.onError((error) => reported.push((error as Error).message));
    await worker.handle(deliveryOf(makeAlert()));
    await worker.drain({ timeoutMs: 15_000 });
    expect(calls).toEqual({ audit: 1, crm: 2 });
    expect(reported).toEqual(['CRM down']);
    const [failed] = await queue.failed();
    expect(failed).toMatchObject({ tries: 2, succeeded: ['audit'] });
    expect(failed?.error).toMatch(/Handler crm failed/);

    broken = false;
    expect(await queue.retryAll()).toBe(1);
    await worker.drain({ timeoutMs: 15_000 });
    expect(calls).toEqual({ audit: 1, crm: 3 });
    expect(await queue.counts()).toMatchObject({ failed: 0, completed: 1 });
  });

  it('in order per user: two queues, random failures; one alert at a time per user, oldest first', async () => {
    const prefix = newPrefix();
    const users = Array.from({ length: 8 }, (_, i) => `cl_${process.pid}_${String(i)}`);
    const alertOf = (user: string, minute: number): Record<string, unknown> =>
      makeAlert({
        userId: user,
        triggeredAt: new Date(Date.UTC(2026, 5, 1, 7, minute)).toISOString(),
      });
    const receivers = [queueOn(prefix), queueOn(prefix)].map((queue) =>
      receiverOn(queue, {
        order: 'per-user',
        concurrency: 3,
        retries: { retries: 10, backoffMs: () => 15 },
      }),
    );
    let index = 0;
    for (const minute of [3, 1, 4, 2]) {
      for (const user of users) {
        const receiver = receivers[index++ % 2] as Receiver;
        expect((await receiver.handle(deliveryOf(alertOf(user, minute)))).status).toBe(202);
      }
    }
    const running = new Set<string>();
    const overlaps: string[] = [];
    const done = new Map<string, string[]>();
    let seed = 3;
    const random = (): number => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    for (const receiver of receivers) {
      receiver.on(
        'churn_risk_alert',
        async (alert) => {
          if (running.has(alert.userId)) overlaps.push(alert.userId);
          running.add(alert.userId);
          try {
            await new Promise((resolve) => setTimeout(resolve, random() * 5));
            if (random() < 0.3) throw new Error('transient');
            done.set(alert.userId, [...(done.get(alert.userId) ?? []), alert.triggeredAt]);
          } finally {
            running.delete(alert.userId);
          }
        },
        { id: 'crm' },
      );
    }
    await Promise.all(receivers.map((receiver) => receiver.drain({ timeoutMs: 30_000 })));
    expect(overlaps).toEqual([]);
    for (const user of users) {
      expect(done.get(user), user).toEqual(
        [1, 2, 3, 4].map((minute) => alertOf(user, minute).triggeredAt),
      );
    }
    expect(await (open.queues.at(-1) as RedisQueue).counts()).toMatchObject({
      waiting: 0,
      delayed: 0,
      failed: 0,
      completed: users.length * 4,
    });
  });

  it('in order per user: a failed alert releases its user, and a retry from the failed set runs it', async () => {
    const queue = queueOn(newPrefix());
    const worker = receiverOn(queue, { order: 'per-user', concurrency: 2 });
    const user = `clf_${process.pid}`;
    const [older, newer] = [1, 2].map((minute) =>
      makeAlert({
        userId: user,
        triggeredAt: new Date(Date.UTC(2026, 5, 2, 7, minute)).toISOString(),
      }),
    ) as [Record<string, unknown>, Record<string, unknown>];
    let broken = true;
    const ran: string[] = [];
    worker.on('churn_risk_alert', (alert) => {
      if (broken && alert.triggeredAt === older.triggeredAt) throw new Error('CRM down');
      ran.push(alert.triggeredAt);
    });
    for (const alert of [older, newer]) {
      expect((await worker.handle(deliveryOf(alert))).status).toBe(202);
    }
    await worker.drain({ timeoutMs: 15_000 });
    expect(ran).toEqual([newer.triggeredAt]);
    broken = false;
    await queue.retry(`${user}:${String(older.triggeredAt)}`);
    await worker.drain({ timeoutMs: 15_000 });
    expect(ran).toEqual([newer.triggeredAt, older.triggeredAt]);
    expect(await queue.counts()).toMatchObject({ failed: 0, completed: 2 });
  });
});
