import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore, type AlertStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';

// receiver.sweep runs the due alerts of a durable queue within a budget, in a process
// that is not a worker (a cron route, a scheduled function).

const SECRET = 'whsec_sweep';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function request(userId: string): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
  return { method: 'POST', headers, body };
}

/** A receiver that only accepts and sweeps (no worker loop), on `store`. */
function sweeper(store: AlertStore, concurrency = 4): Receiver {
  return createReceiver({
    secret: SECRET,
    queue: createDurableQueue(store, { leaseMs: 2_000 }),
    consume: false,
    concurrency,
    retries: { retries: 1, backoffMs: () => 0 },
  });
}

describe('receiver.sweep', () => {
  it('runs the due alerts: completed, retried once its delay passed, failed with onError once', async () => {
    const store = createMemoryStore();
    const receiver = sweeper(store);
    const errors: unknown[] = [];
    let flakyRuns = 0;
    receiver.onError((error) => void errors.push(error));
    receiver.on('churn_risk_alert', (alert) => {
      if (alert.userId === 'user_flaky' && flakyRuns++ === 0) throw new Error('once');
      if (alert.userId === 'user_broken') throw new Error('always');
    });
    for (const user of ['user_ok', 'user_flaky', 'user_broken']) {
      expect((await receiver.handle(request(user))).status).toBe(202);
    }
    // Nothing runs until a sweep: no worker loop in this process.
    await sleep(50);
    expect(flakyRuns).toBe(0);
    const first = await receiver.sweep({ budgetMs: 5_000 });
    // The retries' delay is 0: the flaky and broken alerts are due again at once, and this sweep
    // keeps taking while it has budget, so both reach their end in it or in the next one.
    const second = await receiver.sweep({ budgetMs: 5_000 });
    const total = {
      completed: first.completed + second.completed,
      retried: first.retried + second.retried,
      failed: first.failed + second.failed,
    };
    expect(total).toEqual({ completed: 2, retried: 2, failed: 1 });
    expect(second.left).toBe(0);
    expect(second.nextDueInMs).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(await store.counts()).toMatchObject({ waiting: 0, active: 0, failed: 1 });
    await receiver.close();
  });

  it('takes over an alert whose taker died (its lease expired), telling the handler', async () => {
    const store = createMemoryStore();
    const receiver = sweeper(store);
    const stalls: number[] = [];
    receiver.on('churn_risk_alert', (_alert, context) => void stalls.push(context.stalls));
    expect((await receiver.handle(request('user_frozen'))).status).toBe(202);
    expect(await store.take({ token: 'frozen-function', leaseMs: 20 })).toBeDefined();
    await sleep(40);
    const result = await receiver.sweep({ budgetMs: 2_000 });
    expect(result).toEqual({ completed: 1, retried: 0, failed: 0, left: 0 });
    expect(stalls).toEqual([1]);
    await receiver.close();
  });

  it('never runs one alert twice when two sweeps run at once', async () => {
    const store = createMemoryStore();
    const [a, b] = [sweeper(store), sweeper(store)];
    const runs = new Map<string, number>();
    for (const receiver of [a, b]) {
      receiver.on('churn_risk_alert', async (alert) => {
        runs.set(alert.userId, (runs.get(alert.userId) ?? 0) + 1);
        await sleep(5);
      });
    }
    for (let i = 0; i < 30; i++)
      expect((await a.handle(request(`user_${String(i)}`))).status).toBe(202);
    const [one, two] = await Promise.all([
      a.sweep({ budgetMs: 10_000 }),
      b.sweep({ budgetMs: 10_000 }),
    ]);
    expect(one.completed + two.completed).toBe(30);
    expect(runs.size).toBe(30);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it("takes nothing in the budget's last fifth and reports what it left", async () => {
    const store = createMemoryStore();
    const receiver = sweeper(store, 1);
    receiver.on('churn_risk_alert', () => sleep(300));
    for (let i = 0; i < 20; i++)
      expect((await receiver.handle(request(`user_slow_${String(i)}`))).status).toBe(202);
    const result = await receiver.sweep({ budgetMs: 1_000 });
    // At most the takes that started before 800 ms ran (one at a time, 300 ms each).
    expect(result.completed).toBeGreaterThanOrEqual(1);
    expect(result.completed).toBeLessThanOrEqual(3);
    expect(result.completed + result.left).toBe(20);
    await receiver.close();
  });

  it("refuses a budget under one try's minimum, and a receiver without a durable queue", async () => {
    const receiver = sweeper(createMemoryStore());
    await expect(receiver.sweep({ budgetMs: 500 })).rejects.toThrow(TypeError);
    await expect(receiver.sweep({} as { budgetMs: number })).rejects.toThrow(/budgetMs/);
    await receiver.close();
    const memory = createReceiver({ secret: SECRET });
    await expect(memory.sweep({ budgetMs: 5_000 })).rejects.toThrow(/durable pull-based queue/);
    await memory.close();
  });

  it('rejects naming the store when it does not answer', async () => {
    let up = true;
    const store = createMemoryStore({ available: () => up });
    const receiver = sweeper(store);
    receiver.on('churn_risk_alert', () => undefined);
    expect((await receiver.handle(request('user_down'))).status).toBe(202);
    up = false;
    await expect(receiver.sweep({ budgetMs: 2_000 })).rejects.toThrow(
      /The memory store failed during the sweep: The memory store is unavailable/,
    );
    up = true;
    expect(await receiver.sweep({ budgetMs: 2_000 })).toMatchObject({ completed: 1, left: 0 });
    await receiver.close();
  });
});

describe("consume: 'invocation'", () => {
  function invocationReceiver(store: AlertStore, retries = 0): Receiver {
    return createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store, { leaseMs: 2_000 }),
      consume: 'invocation',
      keepAliveBudgetMs: 5_000,
      retries: { retries, backoffMs: () => 300 },
    });
  }

  it('answers at once, then runs the alert inside the keep-alive it hands the platform', async () => {
    const store = createMemoryStore();
    const receiver = invocationReceiver(store);
    let finished = false;
    receiver.on('churn_risk_alert', async () => {
      await sleep(200);
      finished = true;
    });
    const kept: Promise<unknown>[] = [];
    const answer = await receiver.handle({
      ...request('user_invoked'),
      waitUntil: (promise) => void kept.push(promise),
    });
    expect(answer.status).toBe(202);
    expect(finished).toBe(false);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(finished).toBe(true);
    expect(await store.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
    await receiver.close();
  });

  it('marks the queue as run by invocations once such a receiver is attached (the ops page reads it)', async () => {
    const queue = createDurableQueue(createMemoryStore());
    expect(queue.invocationMode).toBe(false);
    const receiver = createReceiver({
      secret: SECRET,
      queue,
      consume: 'invocation',
      keepAliveBudgetMs: 5_000,
    });
    expect(queue.invocationMode).toBe(true);
    const worker = createDurableQueue(createMemoryStore());
    const other = createReceiver({ secret: SECRET, queue: worker });
    expect(worker.invocationMode).toBe(false);
    await Promise.all([receiver.close(), other.close()]);
  });

  it('leaves a retry that is not due yet to a later invocation, which runs it once due', async () => {
    const store = createMemoryStore();
    const receiver = invocationReceiver(store, 1);
    let runs = 0;
    receiver.on('churn_risk_alert', (alert) => {
      if (alert.userId === 'user_retry' && runs++ === 0) throw new Error('first try');
    });
    const kept: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>): void => void kept.push(promise);
    expect((await receiver.handle({ ...request('user_retry'), waitUntil })).status).toBe(202);
    await Promise.all(kept);
    expect(runs).toBe(1);
    expect((await store.counts()).delayed).toBe(1);
    // A sweep now runs nothing, and says when the retry falls due.
    const early = await receiver.sweep({ budgetMs: 1_000 });
    expect(early).toMatchObject({ completed: 0, retried: 0, failed: 0, left: 0 });
    expect(early.nextDueInMs).toBeGreaterThan(0);
    expect(early.nextDueInMs).toBeLessThanOrEqual(300);
    await sleep(350); // the retry's delay passes; the next invocation (another alert) runs it
    expect((await receiver.handle({ ...request('user_next'), waitUntil })).status).toBe(202);
    await Promise.all(kept);
    expect(runs).toBe(2);
    expect(await store.counts()).toMatchObject({ waiting: 0, delayed: 0, failed: 0 });
    await receiver.close();
  });

  it('takes the alert it just accepted first, ahead of a backlog, then the others', async () => {
    const store = createMemoryStore();
    const backlog = sweeper(store);
    for (const user of ['user_old_1', 'user_old_2', 'user_old_3']) {
      expect((await backlog.handle(request(user))).status).toBe(202);
    }
    const receiver = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(store, { leaseMs: 2_000 }),
      consume: 'invocation',
      keepAliveBudgetMs: 5_000,
      concurrency: 1,
    });
    const order: string[] = [];
    receiver.on('churn_risk_alert', (alert) => void order.push(alert.userId));
    const kept: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>): void => void kept.push(promise);
    expect((await receiver.handle({ ...request('user_new'), waitUntil })).status).toBe(202);
    await Promise.all(kept);
    expect(order).toEqual(['user_new', 'user_old_1', 'user_old_2', 'user_old_3']);
    await Promise.all([receiver.close(), backlog.close()]);
  });

  it('is refused without a durable pull queue or without a budget where the platform has none', () => {
    expect(() => createReceiver({ secret: SECRET, consume: 'invocation' })).toThrow(
      /durable queue/,
    );
    expect(() =>
      createReceiver({
        secret: SECRET,
        queue: createDurableQueue(createMemoryStore()),
        consume: 'invocation',
      }),
    ).toThrow(/keepAliveBudgetMs/);
  });
});
