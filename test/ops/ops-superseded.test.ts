import { describe, expect, it } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createOpsHandler } from '@churn-risk/ops';
import { quietLogger } from '../support/quiet-logger.js';

// The page shows how many handler runs its receiver skipped for superseded alerts (order per
// user, `superseded: 'skip'`), beside the store's counts, in the HTML and in `api/counts`.

const SECRET = 'whsec_ops_superseded';

describe('the operations page and superseded alerts', () => {
  it('shows the receiver’s superseded count, read again at every refresh', async () => {
    const queue = createDurableQueue(createMemoryStore(), { pollIntervalMs: 5 });
    const receiver = createReceiver({
      secret: SECRET,
      order: 'per-user',
      queue,
      logger: quietLogger,
    });
    const at = (minute: number): string => new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();
    // Both accepted before a handler is registered: the older starts superseded.
    for (const minute of [0, 5]) {
      const { headers, body } = createTestDelivery(
        { userId: 'u_ops', triggeredAt: at(minute) },
        { secret: SECRET },
      );
      expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    }
    const ops = createOpsHandler({ queue, authorize: 'none', receiver, logger: quietLogger });
    const before = (await (await ops(new Request('http://ops.test/ops/api/counts'))).json()) as {
      counts: { superseded?: number };
    };
    expect(before.counts.superseded).toBe(0);
    const written: string[] = [];
    receiver.on(
      'churn_risk_alert',
      (alert) => {
        written.push(alert.triggeredAt);
      },
      { id: 'crm', superseded: 'skip' },
    );
    await receiver.drain({ timeoutMs: 5_000 });
    expect(written).toEqual([at(5)]);
    const after = (await (await ops(new Request('http://ops.test/ops/api/counts'))).json()) as {
      counts: { superseded?: number; completed?: number };
    };
    expect(after.counts.superseded).toBe(1);
    const page = await (await ops(new Request('http://ops.test/ops'))).text();
    expect(page).toMatch(/<dt>superseded<\/dt>\s*<dd data-count="superseded">1<\/dd>/);
    await receiver.close();
  });

  it('shows no superseded cell without a receiver, and refuses a receiver that is not one', async () => {
    const queue = createDurableQueue(createMemoryStore());
    const ops = createOpsHandler({ queue, authorize: 'none', logger: quietLogger });
    const page = await (await ops(new Request('http://ops.test/ops'))).text();
    expect(page).not.toContain('data-count="superseded"');
    expect(() =>
      createOpsHandler({
        queue,
        authorize: 'none',
        receiver: {} as { stats: { superseded: number } },
      }),
    ).toThrow(/receiver must be a receiver/);
  });
});
