import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  type AlertContext,
  type ChurnRiskAlert,
  type Receiver,
} from '@churn-risk/core';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { alertOf } from '../testing/order-cases.js';
import { delivery, quietLogger, SECRET, sleep } from '../testing/support.js';

// Order per user on the in-memory queue (the default) and on the durable memory store: the
// stale-overwrite story of the issue that asked for it, and what a handler sees.

const quiet = { logger: quietLogger };

/**
 * Registers on each of `receivers` a handler that runs `napMs`, and records the times of the
 * alerts it started for each user and how many started while another of their user ran.
 */
function watchUsers(
  receivers: readonly Receiver[],
  napMs: number,
): { overlaps: () => number; started: Map<string, string[]> } {
  const running = new Set<string>();
  const started = new Map<string, string[]>();
  let overlaps = 0;
  for (const receiver of receivers) {
    receiver.on('churn_risk_alert', async (alert) => {
      if (running.has(alert.userId)) overlaps++;
      running.add(alert.userId);
      started.set(alert.userId, [...(started.get(alert.userId) ?? []), alert.triggeredAt]);
      await sleep(napMs);
      running.delete(alert.userId);
    });
  }
  return { overlaps: () => overlaps, started };
}

describe("createReceiver({ order: 'per-user' }) on the in-memory queue", () => {
  it('an older alert whose first try failed no longer overwrites a newer one', async () => {
    // 10:00 high fails once; 10:05 low arrives meanwhile. Without an order the retry of the
    // older alert ran last and the record ended "high".
    const run = async (order: 'none' | 'per-user'): Promise<string[]> => {
      const receiver = createReceiver({
        secret: SECRET,
        order,
        retries: { retries: 2, backoffMs: () => 50 },
        ...quiet,
      });
      const writes: string[] = [];
      let failedOnce = false;
      receiver.on('churn_risk_alert', async (alert) => {
        await sleep(5);
        if (alert.tier === 'high' && !failedOnce) {
          failedOnce = true;
          throw new Error('CRM timed out');
        }
        writes.push(alert.tier);
      });
      const high = alertOf('u_crm', 0); // even minute: high
      const low = alertOf('u_crm', 5); // odd minute: low
      expect((await receiver.handle(delivery(high))).status).toBe(202);
      await sleep(20);
      expect((await receiver.handle(delivery(low))).status).toBe(202);
      await receiver.drain({ timeoutMs: 5_000 });
      return writes;
    };
    expect(await run('none')).toEqual(['low', 'high']);
    expect(await run('per-user')).toEqual(['high', 'low']);
  });

  it("superseded: 'skip' does not run for an alert a newer one superseded; 'run' sees it", async () => {
    const receiver = createReceiver({ secret: SECRET, order: 'per-user', ...quiet });
    const crm: string[] = [];
    const audit: { at: string; supersededBy: string | undefined }[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    receiver.on(
      'churn_risk_alert',
      async (alert) => {
        if (alert.triggeredAt === alertOf('u_s', 0).alert.triggeredAt) await gate;
        crm.push(alert.triggeredAt);
      },
      { id: 'crm', superseded: 'skip' },
    );
    receiver.on(
      'churn_risk_alert',
      (alert, context: AlertContext) => {
        audit.push({ at: alert.triggeredAt, supersededBy: context.supersededBy });
      },
      { id: 'audit' },
    );
    // 10:00 runs (held at the gate); 10:09 and 10:03 wait; 10:03 starts next (oldest first) and
    // is superseded by 10:09, accepted before it started.
    for (const minute of [0, 9, 3]) {
      expect((await receiver.handle(delivery(alertOf('u_s', minute)))).status).toBe(202);
      await sleep(10); // 10:00 starts before the others arrive
    }
    await sleep(20);
    release();
    await receiver.drain({ timeoutMs: 5_000 });
    const at = (minute: number): string => alertOf('u_s', minute).alert.triggeredAt;
    expect(audit).toEqual([
      { at: at(0), supersededBy: undefined },
      { at: at(3), supersededBy: at(9) },
      { at: at(9), supersededBy: undefined },
    ]);
    // 10:00 started before the others were accepted: not superseded, its CRM write ran.
    expect(crm).toEqual([at(0), at(9)]);
    expect(receiver.stats.superseded).toBe(1);
    expect(receiver.stats.failed).toBe(0);
  });

  it('a late alert, older than one already handled, is answered 202 and superseded', async () => {
    const receiver = createReceiver({ secret: SECRET, order: 'per-user', ...quiet });
    const seen: { at: string; supersededBy: string | undefined }[] = [];
    receiver.on(
      'churn_risk_alert',
      (alert: ChurnRiskAlert, context: AlertContext) => {
        seen.push({ at: alert.triggeredAt, supersededBy: context.supersededBy });
      },
      { id: 'crm', superseded: 'skip' },
    );
    receiver.on('churn_risk_alert', () => undefined, { id: 'audit' });
    expect((await receiver.handle(delivery(alertOf('u_late', 30)))).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 });
    expect((await receiver.handle(delivery(alertOf('u_late', 10)))).status).toBe(202);
    await receiver.drain({ timeoutMs: 5_000 });
    expect(seen).toEqual([
      { at: alertOf('u_late', 30).alert.triggeredAt, supersededBy: undefined },
    ]);
    expect(receiver.stats.superseded).toBe(1);
  });

  it('alerts of one user never run at once, other users run side by side, oldest first', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      order: 'per-user',
      concurrency: 8,
      ...quiet,
    });
    const running = new Map<string, number>();
    let overlaps = 0;
    let maxSideBySide = 0;
    let now = 0;
    const started = new Map<string, string[]>();
    receiver.on('churn_risk_alert', async (alert) => {
      if ((running.get(alert.userId) ?? 0) > 0) overlaps++;
      running.set(alert.userId, (running.get(alert.userId) ?? 0) + 1);
      maxSideBySide = Math.max(maxSideBySide, ++now);
      started.set(alert.userId, [...(started.get(alert.userId) ?? []), alert.triggeredAt]);
      await sleep(3 + ((alert.score * 1000) % 7));
      now--;
      running.set(alert.userId, (running.get(alert.userId) ?? 1) - 1);
    });
    const alerts = Array.from({ length: 12 }, (_, u) =>
      [4, 1, 3, 0, 2].map((minute) => alertOf(`u_many_${String(u)}`, minute)),
    ).flat();
    const answers = await Promise.all(alerts.map((entry) => receiver.handle(delivery(entry))));
    expect(answers.every((answer) => answer.status === 202)).toBe(true);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(overlaps).toBe(0);
    expect(maxSideBySide).toBeGreaterThan(1);
    for (const list of started.values()) {
      expect(list).toHaveLength(5);
      // All five were accepted before the first ended: each user's alerts ran oldest first,
      // except the one that had already started (the first accepted).
      expect(list.slice(1)).toEqual([...list.slice(1)].sort());
    }
  });

  it("superseded: 'skip' without order: 'per-user' is a TypeError naming the option", () => {
    const receiver = createReceiver({ secret: SECRET, ...quiet });
    expect(() => receiver.on('churn_risk_alert', () => undefined, { superseded: 'skip' })).toThrow(
      /superseded must be 'run', or 'skip' with createReceiver\(\{ order: 'per-user' \}\)/,
    );
    expect(() =>
      receiver.on('churn_risk_alert', () => undefined, { superseded: 'later' as 'skip' }),
    ).toThrow(TypeError);
    expect(() => createReceiver({ secret: SECRET, order: 'user' as 'per-user' })).toThrow(
      /order must be 'none' or 'per-user'/,
    );
  });

  it('an alert answered 202 in a waitUntil runs in its own turn, in order', async () => {
    const receiver = createReceiver({ secret: SECRET, order: 'per-user', ...quiet });
    const order: string[] = [];
    receiver.on('churn_risk_alert', async (alert) => {
      await sleep(10);
      order.push(alert.triggeredAt);
    });
    const kept: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>): void => {
      kept.push(promise);
    };
    for (const minute of [0, 2, 1]) {
      const answer = await receiver.handle({ ...delivery(alertOf('u_edge', minute)), waitUntil });
      expect(answer.status).toBe(202);
    }
    await Promise.all(kept);
    const at = (minute: number): string => alertOf('u_edge', minute).alert.triggeredAt;
    expect(order).toEqual([at(0), at(1), at(2)]);
  });
});

describe("order: 'per-user' on a durable store shared by two receivers", () => {
  it('twelve users, five alerts each, concurrency 8 in each receiver: no overlap', async () => {
    const store = createMemoryStore();
    const receivers = [0, 1].map(() =>
      createReceiver({
        secret: SECRET,
        order: 'per-user',
        concurrency: 8,
        queue: createDurableQueue(store, { leaseMs: 5_000, pollIntervalMs: 5 }),
        ...quiet,
      }),
    );
    const alerts = Array.from({ length: 12 }, (_, u) =>
      [0, 1, 2, 3, 4].map((minute) => alertOf(`u_durable_${String(u)}`, minute)),
    ).flat();
    for (const [index, entry] of alerts.entries()) {
      const receiver = receivers[index % 2] as (typeof receivers)[number];
      expect((await receiver.handle(delivery(entry))).status).toBe(202);
    }
    const { overlaps, started } = watchUsers(receivers, 2);
    for (const receiver of receivers) await receiver.drain({ timeoutMs: 10_000 });
    expect(overlaps()).toBe(0);
    for (const list of started.values()) expect(list).toEqual([...list].sort());
    expect([...started.values()].flat()).toHaveLength(60);
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  it('two sweeps at once (invocation mode) hold each user too, oldest first', async () => {
    const store = createMemoryStore();
    const receivers = [0, 1].map(() =>
      createReceiver({
        secret: SECRET,
        order: 'per-user',
        consume: 'invocation',
        keepAliveBudgetMs: 10_000,
        queue: createDurableQueue(store, { leaseMs: 5_000 }),
        ...quiet,
      }),
    );
    const { overlaps, started } = watchUsers(receivers, 3);
    const alerts = Array.from({ length: 4 }, (_, u) =>
      [3, 0, 2, 1].map((minute) => alertOf(`u_sweep_${String(u)}`, minute)),
    ).flat();
    // Accepted through the store directly: no invocation runs them on its own.
    for (const entry of alerts) {
      await store.accept(entry, {
        dedupeTtlMs: 60_000,
        order: { user: entry.alert.userId, at: Date.parse(entry.alert.triggeredAt) },
      });
    }
    const results = await Promise.all(
      receivers.map((receiver) => receiver.sweep({ budgetMs: 5_000 })),
    );
    expect(results.reduce((sum, result) => sum + result.completed, 0)).toBe(16);
    expect(overlaps()).toBe(0);
    for (const list of started.values()) expect(list).toEqual([...list].sort());
  });
});
