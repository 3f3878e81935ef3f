import { afterEach, describe, expect, it } from 'vitest';
import {
  createQueueReceiver,
  createReceiver,
  type ChurnRiskAlert,
  type QueueReceiverOptions,
  type Receiver,
} from '@churn-risk/core';
import {
  createDurableQueue,
  createMemoryQueue,
  createMemoryStore,
  type AlertQueue,
} from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';

// `createQueueReceiver` (a queue-mode bundle within 25 KB gzip): the receiver of `createReceiver({ queue })`,
// built without the in-memory queue's code. The same answers and the same processing; only the
// options that configure the in-memory queue are refused.

const SECRET = 'whsec_queue_receiver';
const open: Receiver[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((receiver) => receiver.close({ timeoutMs: 2_000 })));
});

function durableQueue(): AlertQueue {
  return createDurableQueue(createMemoryStore(), { pollIntervalMs: 10 });
}

function post(receiver: Receiver, alert: Partial<ChurnRiskAlert>) {
  const { headers, body } = createTestDelivery(
    { triggeredAt: '2026-11-27T12:00:00.000Z', ...alert },
    { secret: SECRET },
  );
  return receiver.handle({ method: 'POST', headers, body });
}

describe('createQueueReceiver', () => {
  it('needs a queue, and names the function in its errors', () => {
    const noQueue = { secret: SECRET } as unknown as QueueReceiverOptions;
    expect(() => createQueueReceiver(noQueue)).toThrow(
      new TypeError(
        'createQueueReceiver needs a queue (createSqsQueue, createRedisQueue, createDurableQueue...); ' +
          'for the in-memory queue, use createReceiver.',
      ),
    );
    expect(() => createQueueReceiver(null as unknown as QueueReceiverOptions)).toThrow(
      /^createQueueReceiver needs an options object/,
    );
    const typo = { secret: SECRET, queue: durableQueue(), concurency: 2 };
    expect(() => createQueueReceiver(typo as unknown as QueueReceiverOptions)).toThrow(
      /createQueueReceiver does not know the option "concurency"/,
    );
  });

  it('exposes the queue it was created with as receiver.queue, each receiver its own', () => {
    const queue = durableQueue();
    const first = createQueueReceiver({ secret: SECRET, queue });
    const second = createReceiver({ secret: SECRET, queue: durableQueue() });
    const inMemory = createReceiver({ secret: SECRET });
    open.push(first, second, inMemory);
    expect(first.queue).toBe(queue);
    expect(second.queue).not.toBe(queue);
    expect(second.queue.durable).toBe(true);
    expect(inMemory.queue.kind).toBe('memory');
  });

  it("refuses dedupe, dedupeTtlMs and maxQueue, the in-memory queue's options", () => {
    for (const extra of [{ dedupe: false }, { dedupeTtlMs: 1_000 }, { maxQueue: 5 }]) {
      const options = { secret: SECRET, queue: durableQueue(), ...extra };
      expect(() => createQueueReceiver(options as unknown as QueueReceiverOptions)).toThrow(
        /dedupe, dedupeTtlMs and maxQueue configure the in-memory queue/,
      );
    }
  });

  it('accepts, de-duplicates and runs handlers as createReceiver({ queue }) does', async () => {
    const outcomes: Record<string, unknown>[] = [];
    for (const create of [createQueueReceiver, createReceiver]) {
      const seen: string[] = [];
      const receiver = create({ secret: SECRET, queue: durableQueue() });
      open.push(receiver);
      receiver.on('churn_risk_alert', (alert) => {
        seen.push(alert.userId);
      });
      const first = await post(receiver, { userId: 'u_1' });
      const again = await post(receiver, { userId: 'u_1' });
      const forged = await receiver.handle({
        method: 'POST',
        headers: { 'x-service-signature': `sha256=${'0'.repeat(64)}`, 'x-service-timestamp': '1' },
        body: '{}',
      });
      await receiver.drain({ timeoutMs: 5_000 });
      outcomes.push({
        first: [first.status, first.body],
        again: [again.status, again.body],
        forged: forged.status,
        seen,
        stats: receiver.stats,
      });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0]).toMatchObject({
      first: [202, '{"received":true}'],
      again: [202, '{"received":true,"duplicate":true}'],
      forged: 401,
      seen: ['u_1'],
    });
  });

  it("takes any AlertQueue, also createMemoryQueue, with mode 'sync'", async () => {
    const receiver = createQueueReceiver({
      secret: SECRET,
      queue: createMemoryQueue(),
      mode: 'sync',
      retries: 0,
    });
    open.push(receiver);
    receiver.on('churn_risk_alert', (alert) => {
      if (alert.userId === 'fails') throw new Error('boom');
    });
    receiver.onError(() => undefined);
    expect((await post(receiver, { userId: 'works' })).status).toBe(202);
    expect((await post(receiver, { userId: 'fails' })).status).toBe(500);
  });
});
