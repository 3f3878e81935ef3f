import { describe, expect, it } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSweepHandler } from '@churn-risk/next';

// The cron route that runs a durable queue's due alerts where no worker runs.

const SECRET = 'whsec_next_sweep';
const CRON_SECRET = 'cron_secret_0123456789abcdef';

function setup(available: () => boolean = () => true) {
  const store = createMemoryStore({ available });
  const receiver = createReceiver({
    secret: SECRET,
    queue: createDurableQueue(store),
    consume: false,
  });
  const handled: string[] = [];
  receiver.on('churn_risk_alert', (alert) => void handled.push(alert.userId));
  return { store, receiver, handled };
}

const sweepRequest = (authorization?: string): Request =>
  new Request('http://localhost/api/churn-risk/sweep', {
    headers: authorization === undefined ? {} : { authorization },
  });

describe('createSweepHandler', () => {
  it('runs the due alerts for a request with the cron bearer and answers what it did', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_swept' }, { secret: SECRET });
    expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    const GET = createSweepHandler(receiver, { secret: CRON_SECRET, budgetMs: 5_000 });
    const response = await GET(sweepRequest(`Bearer ${CRON_SECRET}`));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ completed: 1, retried: 0, failed: 0, left: 0 });
    expect(handled).toEqual(['user_swept']);
    await receiver.close();
  });

  it('answers 401 without the bearer, with a wrong one, or another scheme, and never echoes it', async () => {
    const { receiver, handled } = setup();
    const { headers, body } = createTestDelivery({ userId: 'user_kept' }, { secret: SECRET });
    await receiver.handle({ method: 'POST', headers, body });
    const GET = createSweepHandler(receiver, { secret: CRON_SECRET });
    for (const authorization of [
      undefined,
      'Bearer wrong_secret_0123456789abcd',
      `Bearer ${CRON_SECRET}x`,
      `Basic ${CRON_SECRET}`,
      `Bearer  ${CRON_SECRET}`,
    ]) {
      const response = await GET(sweepRequest(authorization));
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.text()).not.toContain(CRON_SECRET);
    }
    expect(handled).toEqual([]);
    await receiver.close();
  });

  it('reads CRON_SECRET from the environment', async () => {
    const { receiver } = setup();
    process.env.CRON_SECRET = CRON_SECRET;
    try {
      const GET = createSweepHandler(receiver);
      expect((await GET(sweepRequest(`Bearer ${CRON_SECRET}`))).status).toBe(200);
    } finally {
      delete process.env.CRON_SECRET;
    }
    expect(() => createSweepHandler(receiver)).toThrow(/CRON_SECRET/);
    await receiver.close();
  });

  it('answers 503 naming the store when it does not answer', async () => {
    let up = true;
    const { receiver } = setup(() => up);
    const GET = createSweepHandler(receiver, { secret: CRON_SECRET });
    up = false;
    const response = await GET(sweepRequest(`Bearer ${CRON_SECRET}`));
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('60');
    expect(await response.json()).toMatchObject({
      error: {
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/memory store/) as string,
      },
    });
    await receiver.close();
  });

  it("refuses a budget under a sweep's minimum and unknown options", () => {
    const { receiver } = setup();
    expect(() => createSweepHandler(receiver, { secret: CRON_SECRET, budgetMs: 10 })).toThrow(
      TypeError,
    );
    expect(() =>
      createSweepHandler(receiver, { secret: CRON_SECRET, budget: 5_000 } as never),
    ).toThrow(/did you mean budgetMs\?/);
  });
});
