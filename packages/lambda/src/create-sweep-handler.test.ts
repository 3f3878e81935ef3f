import { describe, expect, it } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createLambdaHandler, createSweepHandler } from '@churn-risk/lambda';

// On Lambda, a scheduled sweep runs a durable queue's due alerts; invocation mode, whose
// answer would wait for the sweep on a platform that freezes after it, is refused.

const SECRET = 'whsec_lambda_sweep';

function setup(available: () => boolean = () => true) {
  const receiver = createReceiver({
    secret: SECRET,
    queue: createDurableQueue(createMemoryStore({ available })),
    consume: false,
  });
  const handled: string[] = [];
  receiver.on('churn_risk_alert', (alert) => void handled.push(alert.userId));
  return { receiver, handled };
}

describe('createSweepHandler (Lambda)', () => {
  it('sweeps within the remaining time less a margin and resolves with what it did', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_scheduled' }, { secret: SECRET });
    expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    let asked = 0;
    const sweep = createSweepHandler(receiver);
    const result = await sweep(
      { source: 'aws.scheduler' },
      {
        getRemainingTimeInMillis: () => {
          asked++;
          return 30_000;
        },
      },
    );
    expect(result).toEqual({ completed: 1, retried: 0, failed: 0, left: 0 });
    expect(handled).toEqual(['user_scheduled']);
    expect(asked).toBe(1);
    await receiver.close();
  });

  it('rejects naming the store when it does not answer, and when too little time is left', async () => {
    let up = false;
    const { receiver } = setup(() => up);
    const sweep = createSweepHandler(receiver, { budgetMs: 2_000 });
    await expect(sweep({})).rejects.toThrow(/memory store/);
    up = true;
    const tight = createSweepHandler(receiver);
    await expect(tight({}, { getRemainingTimeInMillis: () => 2_500 })).rejects.toThrow(
      /too little time/,
    );
    expect(() => createSweepHandler(receiver, { budgetMs: 10 })).toThrow(TypeError);
    await receiver.close();
  });

  it("refuses a receiver with consume: 'invocation', naming the sweep", async () => {
    const receiver = createReceiver({
      secret: SECRET,
      queue: createDurableQueue(createMemoryStore()),
      consume: 'invocation',
      keepAliveBudgetMs: 10_000,
    });
    expect(() => createLambdaHandler(receiver)).toThrow(/createSweepHandler/);
    await receiver.close();
  });
});
