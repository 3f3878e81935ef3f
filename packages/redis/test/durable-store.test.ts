import { createReceiver, type Receiver } from '@churn-risk/core';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisQueue, type RedisQueue } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, useRedisServer } from './helpers.js';

const redis = useRedisServer();
const { open } = redis;
let prefixSeq = 0;

function queueOn(prefix: string): RedisQueue {
  const queue = createRedisQueue({ connection: redis.url, prefix, leaseMs: 5000 });
  open.queues.push(queue);
  return queue;
}
function receiverOn(queue: RedisQueue, retries = 0): Receiver {
  const receiver = createReceiver({
    secret: SECRET,
    queue,
    retries: { retries, backoffMs: () => 10 },
  });
  open.receivers.push(receiver);
  return receiver;
}
const newPrefix = (): string => `s${process.pid}-${++prefixSeq}`;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the Redis store under the try protocol', () => {
  it('a worker that lost its lock does not overwrite the record written by the one that took over', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverOn(queue, 2);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let slowStarted = false;
    receiver.on('churn_risk_alert', () => undefined, { id: 'fast' });
    receiver.on(
      'churn_risk_alert',
      async () => {
        slowStarted = true;
        await gate;
        throw new Error('slow failed');
      },
      { id: 'slow' },
    );
    expect((await receiver.handle(deliveryOf(makeAlert()))).status).toBe(202);
    await until(() => slowStarted, 'the slow handler to start');
    const [job] = await queue.bullQueue.getActive();
    if (job === undefined) throw new Error('no active job');

    // Another process takes the alert over: its lock, and the record it wrote.
    const client = new Redis(redis.url);
    const jobKey = queue.bullQueue.toKey(String(job.id));
    const takenOver = { ...job.data, tries: 1, handlers: ['written-by-the-new-holder'] };
    try {
      await client.set(`${jobKey}:lock`, 'token-of-the-new-holder', 'PX', 60_000);
      await client.hset(jobKey, 'data', JSON.stringify(takenOver));
    } finally {
      release();
    }
    await client.quit();
    // The old worker's try ended with a failure it must not store.
    await until(() => queue.running === 0, 'the old worker to end its try');
    const stored = await queue.bullQueue.getJob(String(job.id));
    expect(stored?.data).toEqual(takenOver);
    expect(await queue.counts()).toMatchObject({ delayed: 0, failed: 0 });
  });

  it('retryAll() retries the alerts failed when it was called, once each, though they fail again', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverOn(queue);
    const runs = new Map<string, number>();
    receiver.on('churn_risk_alert', (alert) => {
      runs.set(alert.userId, (runs.get(alert.userId) ?? 0) + 1);
      throw new Error('still down');
    });
    receiver.onError(() => undefined);
    for (let i = 0; i < 3; i++) await receiver.handle(deliveryOf(makeAlert()));
    await receiver.drain({ timeoutMs: 10_000 });
    expect((await queue.counts()).failed).toBe(3);
    expect(await queue.retryAll()).toBe(3);
    await receiver.drain({ timeoutMs: 10_000 });
    expect([...runs.values()]).toEqual([2, 2, 2]);
    expect(await queue.counts()).toMatchObject({ failed: 3, waiting: 0 });
  });

  it('lists a failed alert with the failed handler named and the succeeded ones recorded', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverOn(queue, 1);
    receiver.on('churn_risk_alert', () => undefined, { id: 'audit' });
    receiver.on(
      'churn_risk_alert',
      () => {
        throw new Error('CRM down');
      },
      { id: 'crm' },
    );
    const reported: string[] = [];
    receiver.onError((error) => reported.push((error as Error).message));
    await receiver.handle(deliveryOf(makeAlert()));
    await receiver.drain({ timeoutMs: 10_000 });
    const [failed] = await queue.failed();
    expect(failed).toMatchObject({
      error: 'Handler crm failed: Error: CRM down',
      succeeded: ['audit'],
      tries: 2,
    });
    expect(reported).toEqual(['CRM down']);
  });

  it('refuses a Cluster connection whose prefix has no hash tag', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    expect(() => createRedisQueue({ connection: cluster, prefix: 'churn-risk' })).toThrow(
      /hash tag, such as "\{churn-risk\}"/,
    );
    expect(() => createRedisQueue({ connection: cluster })).toThrow(TypeError);
    cluster.disconnect();
  });

  it('refuses a maxStalls that is not a whole number', () => {
    expect(() => createRedisQueue({ connection: redis.url, maxStalls: -1 })).toThrow(/maxStalls/);
    expect(() => createRedisQueue({ connection: redis.url, maxStalls: 1.5 })).toThrow(TypeError);
  });
});
