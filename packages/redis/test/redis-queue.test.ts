import { createReceiver, type ChurnRiskAlert, type Receiver } from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import { createRedisQueue, type RedisQueue, type RedisQueueOptions } from '../src/index.js';
import { deliveryOf, makeAlert, SECRET, useRedisServer } from './helpers.js';

const redis = useRedisServer();
const { open } = redis;
let prefixSeq = 0;

/** A queue on this file's Redis under a prefix of its own (tests do not see each other's jobs). */
function queueOn(prefix: string, options: Partial<RedisQueueOptions> = {}): RedisQueue {
  const queue = createRedisQueue({
    connection: redis.url,
    prefix,
    leaseMs: 2000,
    ...options,
  });
  open.queues.push(queue);
  return queue;
}

function receiverWith(
  queue: RedisQueue,
  options: Partial<Parameters<typeof createReceiver>[0]> = {},
): Receiver {
  const receiver = createReceiver({ secret: SECRET, queue, retries: 0, ...options });
  open.receivers.push(receiver);
  return receiver;
}

const newPrefix = (): string => `t${process.pid}-${++prefixSeq}`;

/** Resolves once a retry is scheduled (a delayed job) in `queue`, or after 10 s. */
async function retryScheduled(queue: RedisQueue): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await queue.counts()).delayed === 0 && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('createRedisQueue', () => {
  it('answers 202 once Redis holds the job, and a worker in this process runs the handler', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverWith(queue);
    const seen: { alert: ChurnRiskAlert; id: string; attempt: number }[] = [];
    receiver.on('churn_risk_alert', (alert, context) => {
      seen.push({ alert, id: context.id, attempt: context.attempt });
    });
    const alert = makeAlert({ extra: 'kept' });
    const result = await receiver.handle(deliveryOf(alert));
    expect(result.status).toBe(202);
    expect(JSON.parse(result.body)).toEqual({ received: true });
    await receiver.drain({ timeoutMs: 10_000 });
    expect(seen).toEqual([
      { alert, id: `${String(alert.userId)}:${String(alert.triggeredAt)}`, attempt: 0 },
    ]);
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0, completed: 1, failed: 0 });
  });

  it('shares de-duplication: a redelivery to another instance is a duplicate and runs nothing', async () => {
    const prefix = newPrefix();
    const web = receiverWith(queueOn(prefix), { consume: false });
    const other = receiverWith(queueOn(prefix), { consume: false });
    const worker = receiverWith(queueOn(prefix));
    let runs = 0;
    worker.on('churn_risk_alert', () => {
      runs += 1;
    });
    const alert = makeAlert();
    expect((await web.handle(deliveryOf(alert))).status).toBe(202);
    const second = await other.handle(deliveryOf(alert));
    expect(second.status).toBe(202);
    expect(JSON.parse(second.body)).toEqual({ received: true, duplicate: true });
    await worker.drain({ timeoutMs: 10_000 });
    // And a redelivery after the alert was processed is still a duplicate.
    const third = await other.handle(deliveryOf(alert));
    expect(JSON.parse(third.body)).toEqual({ received: true, duplicate: true });
    await worker.drain({ timeoutMs: 10_000 });
    expect(runs).toBe(1);
    expect(web.stats.accepted + other.stats.accepted).toBe(1);
  });

  it('consume: false only accepts: nothing runs until a consuming process starts', async () => {
    const prefix = newPrefix();
    const web = receiverWith(queueOn(prefix), { consume: false });
    let webRuns = 0;
    web.on('churn_risk_alert', () => {
      webRuns += 1;
    });
    for (let i = 0; i < 3; i++)
      expect((await web.handle(deliveryOf(makeAlert()))).status).toBe(202);
    const queue = queueOn(prefix);
    expect((await queue.counts()).waiting).toBe(3);
    expect(await queue.depth()).toBe(3);
    const worker = receiverWith(queue);
    const ran: string[] = [];
    worker.on('churn_risk_alert', (alert) => {
      ran.push(alert.userId);
    });
    await worker.drain({ timeoutMs: 10_000 });
    expect(ran).toHaveLength(3);
    expect(webRuns).toBe(0);
    expect(await queue.depth()).toBe(0);
  });

  it('depth() counts an alert whose retry is scheduled (delayed in Redis, not in the process)', async () => {
    const queue = queueOn(newPrefix());
    const worker = receiverWith(queue, { retries: { retries: 1, backoffMs: () => 60_000 } });
    worker.on('churn_risk_alert', () => {
      throw new Error('down');
    });
    expect((await worker.handle(deliveryOf(makeAlert()))).status).toBe(202);
    await retryScheduled(queue);
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 1 });
    expect(await queue.depth()).toBe(1);
    expect(queue.queued).toBe(0);
  });

  it('retries a failed handler as delayed jobs, without running a handler that succeeded again', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverWith(queue, { retries: { retries: 2, backoffMs: () => 50 } });
    const calls = { ok: 0, flaky: 0 };
    const attempts: number[] = [];
    receiver.on(
      'churn_risk_alert',
      () => {
        calls.ok += 1;
      },
      { id: 'ok' },
    );
    receiver.on(
      'churn_risk_alert',
      (_alert, context) => {
        calls.flaky += 1;
        attempts.push(context.attempt);
        if (context.attempt < 2) throw new Error('not yet');
      },
      { id: 'flaky' },
    );
    const errors: unknown[] = [];
    receiver.onError((error) => errors.push(error));
    expect((await receiver.handle(deliveryOf(makeAlert()))).status).toBe(202);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(calls).toEqual({ ok: 1, flaky: 3 });
    expect(attempts).toEqual([0, 1, 2]);
    expect(errors).toEqual([]);
    expect(await queue.counts()).toMatchObject({ completed: 1, failed: 0, delayed: 0 });
  });

  it('keeps an alert that failed every try in the failed set, calls onError once, and retry(id) runs it again', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverWith(queue, { retries: { retries: 1, backoffMs: () => 30 } });
    let broken = true;
    let runs = 0;
    receiver.on('churn_risk_alert', () => {
      runs += 1;
      if (broken) throw new Error('database down');
    });
    const reported: { message: string; userId: string; attempt: number }[] = [];
    receiver.onError((error, alert, context) => {
      reported.push({
        message: (error as Error).message,
        userId: alert.userId,
        attempt: context.attempt,
      });
    });
    const alert = makeAlert();
    await receiver.handle(deliveryOf(alert));
    await receiver.drain({ timeoutMs: 10_000 });
    expect(runs).toBe(2);
    expect(reported).toEqual([{ message: 'database down', userId: alert.userId, attempt: 1 }]);
    expect(receiver.stats.failed).toBe(1);
    const failed = await queue.failed();
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      id: `${String(alert.userId)}:${String(alert.triggeredAt)}`,
      alert,
      tries: 2,
    });
    expect(failed[0]?.error).toMatch(/database down/);
    expect(await queue.counts()).toMatchObject({ failed: 1 });

    broken = false;
    await queue.retry(failed[0]!.jobId);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(runs).toBe(3);
    expect(reported).toHaveLength(1);
    expect(await queue.counts()).toMatchObject({ failed: 0, completed: 1 });
    await expect(queue.retry(failed[0]!.id)).rejects.toThrow(TypeError);
    await expect(queue.retry('no-such-alert')).rejects.toThrow(/No failed alert/);
  });

  it('retryAll() puts back every failed alert, and retry() takes the alert identity too', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverWith(queue);
    let broken = true;
    const handled: string[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      if (broken) throw new Error('down');
      handled.push(alert.userId);
    });
    receiver.onError(() => undefined);
    const alerts = [makeAlert(), makeAlert(), makeAlert()];
    for (const alert of alerts) await receiver.handle(deliveryOf(alert));
    await receiver.drain({ timeoutMs: 10_000 });
    expect((await queue.counts()).failed).toBe(3);
    broken = false;
    const first = alerts[0]!;
    await queue.retry(`${String(first.userId)}:${String(first.triggeredAt)}`);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled).toEqual([first.userId]);
    expect(await queue.retryAll()).toBe(2);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(handled.sort()).toEqual(alerts.map((a) => String(a.userId)).sort());
  });

  it("refuses mode 'sync' with a TypeError that says why", () => {
    const queue = queueOn(newPrefix());
    expect(() => createReceiver({ secret: SECRET, queue, mode: 'sync' })).toThrow(
      /mode 'sync' cannot be used with the redis queue/,
    );
    expect(() => createReceiver({ secret: SECRET, queue, maxQueue: 5 })).toThrow(TypeError);
  });

  it('answers 503 CLOSED after close(), which stops the worker and closes its connections', async () => {
    const queue = queueOn(newPrefix());
    const receiver = receiverWith(queue);
    receiver.on('churn_risk_alert', () => undefined);
    await receiver.close({ timeoutMs: 10_000 });
    const result = await receiver.handle(deliveryOf(makeAlert()));
    expect(result.status).toBe(503);
    expect(JSON.parse(result.body).error.code).toBe('CLOSED');
    expect(result.headers['retry-after']).toMatch(/^\d+$/);
    expect(queue.bullQueue.closing).toBeDefined();
  });

  it('reports reachability in health()', async () => {
    const queue = queueOn(newPrefix());
    expect(await queue.health()).toEqual({ reachable: true });
    const dead = createRedisQueue({ connection: 'redis://127.0.0.1:1', enqueueTimeoutMs: 300 });
    open.queues.push(dead);
    const health = await dead.health();
    expect(health.reachable).toBe(false);
    expect(health.error).toBeTypeOf('string');
  });

  it('answers 503 OVERLOADED when Redis is unreachable (test/redis/outage.test.ts: when it hangs)', async () => {
    const dead = createRedisQueue({ connection: 'redis://127.0.0.1:1', enqueueTimeoutMs: 300 });
    open.queues.push(dead);
    const receiver = receiverWith(dead, { consume: false });
    const result = await receiver.handle(deliveryOf(makeAlert()));
    expect(result.status).toBe(503);
    expect(JSON.parse(result.body).error.code).toBe('OVERLOADED');
    expect(result.headers['retry-after']).toMatch(/^\d+$/);
  });
});
