import { createReceiver, type Receiver } from '@churn-risk/core';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisQueue, createRedisStore, type RedisQueue } from '../src/index.js';
import { deliveryOf, SECRET, useRedisServer } from './helpers.js';

// Order per user on a real redis-server: several queues (as many processes) on one store, each
// with its receiver in order per user, handlers that fail at random and are retried. Whatever
// the interleaving: no two alerts of a user run at once, a user's alerts start oldest first, a
// retry keeps its user's place, every user ends with its newest alert, and nothing is lost.

const server = useRedisServer();
let prefixes = 0;
const newPrefix = (): string => `order-${process.pid}-${++prefixes}`;

/** An alert of `user`, triggered `minute` minutes after 2026-03-01 09:00 UTC. */
function alertOf(user: string, minute: number): Record<string, unknown> {
  return {
    event: 'churn_risk_alert',
    userId: user,
    score: 0.7,
    tier: 'high',
    signals: ['activity_drop'],
    recommendation: 'Call them.',
    triggeredAt: new Date(Date.UTC(2026, 2, 1, 9, minute)).toISOString(),
  };
}

/** A seeded pseudo-random number in [0, 1): the same run each time. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
}

function queueOn(prefix: string, options: { leaseMs?: number } = {}): RedisQueue {
  const queue = createRedisQueue({ connection: server.url, prefix, ...options });
  server.open.queues.push(queue);
  return queue;
}

function receiverOn(queue: RedisQueue, options: Partial<Parameters<typeof createReceiver>[0]>) {
  const receiver: Receiver = createReceiver({
    secret: SECRET,
    queue,
    order: 'per-user',
    ...options,
  });
  server.open.receivers.push(receiver);
  return receiver;
}

/** What the handlers saw: each try's start and end per user, in the order they happened. */
interface Runs {
  /** `<triggeredAt> <attempt>` of each try as it started, per user. */
  starts: Map<string, string[]>;
  /** The `triggeredAt` of each alert whose handler succeeded, per user, in order. */
  done: Map<string, string[]>;
  overlaps: string[];
}

/** Registers on each receiver a handler that records `runs`, waits a little and fails at random. */
function recordRuns(receivers: Receiver[], failRate: number, seed: number): Runs {
  const runs: Runs = { starts: new Map(), done: new Map(), overlaps: [] };
  const running = new Map<string, string>();
  const random = seeded(seed);
  const push = (map: Map<string, string[]>, key: string, value: string): void => {
    map.set(key, [...(map.get(key) ?? []), value]);
  };
  for (const receiver of receivers) {
    receiver.on(
      'churn_risk_alert',
      async (alert, context) => {
        const other = running.get(alert.userId);
        if (other !== undefined) runs.overlaps.push(`${other} with ${context.id}`);
        running.set(alert.userId, context.id);
        push(runs.starts, alert.userId, `${alert.triggeredAt} ${String(context.attempt)}`);
        try {
          await new Promise((resolve) => setTimeout(resolve, random() * 8));
          if (random() < failRate) throw new Error('transient');
          push(runs.done, alert.userId, alert.triggeredAt);
        } finally {
          running.delete(alert.userId);
        }
      },
      { id: 'crm' },
    );
  }
  return runs;
}

/**
 * Whether a user's tries ran alert by alert in the order of `triggeredAt`: the tries of one alert
 * in a row (a retry keeps its place), the alerts oldest first. Answers what is wrong, or ''.
 */
function inOrder(starts: readonly string[], expected: readonly string[]): string {
  const alerts: string[] = [];
  for (const start of starts) {
    const [at = '', attempt = ''] = start.split(' ');
    if (alerts.at(-1) === at) continue;
    if (alerts.includes(at)) return `${at} ran again after another alert of its user`;
    if (attempt !== '0') return `${at} started with attempt ${attempt}`;
    alerts.push(at);
  }
  return JSON.stringify(alerts) === JSON.stringify(expected)
    ? ''
    : `alerts ran ${JSON.stringify(alerts)}, not ${JSON.stringify(expected)}`;
}

describe('order per user on Redis, across several queues on one store', () => {
  it('three queues, random failures: no overlap, oldest first, retries keep the place, nothing lost', async () => {
    const prefix = newPrefix();
    const users = Array.from({ length: 24 }, (_, i) => `ord_${process.pid}_${String(i)}`);
    const minutes = [1, 2, 3, 4, 5];
    const random = seeded(11);
    // Accepted in a shuffled order, spread over the three queues, before any handler exists.
    const alerts = users
      .flatMap((user) => minutes.map((minute) => alertOf(user, minute)))
      .sort(() => random() - 0.5);
    const receivers = [0, 1, 2].map(() =>
      receiverOn(queueOn(prefix), {
        concurrency: 4,
        retries: { retries: 12, backoffMs: () => 15 },
      }),
    );
    for (const [index, alert] of alerts.entries()) {
      const answer = await (receivers[index % 3] as Receiver).handle(deliveryOf(alert));
      expect(answer.status).toBe(202);
    }
    const runs = recordRuns(receivers, 0.3, 5);
    await Promise.all(receivers.map((receiver) => receiver.drain({ timeoutMs: 60_000 })));

    expect(runs.overlaps).toEqual([]);
    for (const user of users) {
      const expected = minutes.map((minute) => String(alertOf(user, minute).triggeredAt));
      expect(inOrder(runs.starts.get(user) ?? [], expected), user).toBe('');
      // Each alert succeeded once, and the user's last write is its newest alert.
      expect(runs.done.get(user), user).toEqual(expected);
    }
    // Some tries did fail (the retries were exercised), and none failed for good.
    const tries = [...runs.starts.values()].flat();
    expect(tries.filter((start) => !start.endsWith(' 0')).length).toBeGreaterThan(10);
    expect(receivers.map((receiver) => receiver.stats.failed)).toEqual([0, 0, 0]);
    expect(await (server.open.queues[0] as RedisQueue).counts()).toMatchObject({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
      completed: alerts.length,
    });
  });

  it('alerts accepted while the consumers run: still one at a time per user, each user ends with its newest', async () => {
    const prefix = newPrefix();
    const users = Array.from({ length: 6 }, (_, i) => `live_${process.pid}_${String(i)}`);
    const receivers = [0, 1].map(() =>
      receiverOn(queueOn(prefix), {
        concurrency: 5,
        retries: { retries: 12, backoffMs: () => 10 },
      }),
    );
    const runs = recordRuns(receivers, 0.2, 9);
    for (const minute of [1, 2, 3, 4, 5, 6, 7, 8]) {
      for (const [index, user] of users.entries()) {
        const answer = await (receivers[index % 2] as Receiver).handle(
          deliveryOf(alertOf(user, minute)),
        );
        expect(answer.status).toBe(202);
      }
    }
    await Promise.all(receivers.map((receiver) => receiver.drain({ timeoutMs: 60_000 })));
    expect(runs.overlaps).toEqual([]);
    for (const user of users) {
      const done = runs.done.get(user) ?? [];
      expect(done, user).toHaveLength(8);
      // Accepted oldest first, one user's alerts start in that order too.
      expect(done, user).toEqual([...done].sort());
      expect(done.at(-1), user).toBe(alertOf(user, 8).triggeredAt);
    }
  });

  it('a user whose holder ended without its record (a process killed right after the move) is not held for good', async () => {
    const prefix = newPrefix();
    // The user's later alert is parked behind its holder for at most leaseMs.
    const store = createRedisStore({ connection: server.url, prefix, leaseMs: 500 });
    const redis = new Redis(server.url);
    try {
      const user = `stale_${process.pid}`;
      const entry = (minute: number) => {
        const alert = alertOf(user, minute) as { userId: string; triggeredAt: string };
        return {
          id: `${alert.userId}:${alert.triggeredAt}`,
          alert: alert as never,
          receivedAt: Date.now(),
        };
      };
      const order = (minute: number) => ({
        dedupeTtlMs: 60_000,
        order: { user, at: Date.parse(alertOf(user, minute).triggeredAt as string) },
      });
      expect(await store.accept(entry(1), order(1))).toBe('accepted');
      expect(await store.accept(entry(2), order(2))).toBe('accepted');
      const first = await store.take({ token: 't1', leaseMs: 500, perUser: true, wait: false });
      expect(first?.id).toBe(entry(1).id);
      // BullMQ's completion alone, as a process killed before the release would leave it.
      const job = await Job.fromId(store.bullQueue, String(first?.jobId));
      await job?.moveToCompleted(undefined, 't1', false);
      const startedAt = Date.now();
      let next: Awaited<ReturnType<typeof store.take>>;
      do {
        next = await store.take({ token: 't2', leaseMs: 500, perUser: true, wait: true });
      } while (next === undefined && Date.now() - startedAt < 5_000);
      expect(next?.id).toBe(entry(2).id);
      // It holds its user: first of the line, marked.
      expect(await redis.zrange(`${prefix}:order:line:${user}`, 0, -1, 'WITHSCORES')).toEqual([
        String(next?.jobId),
        '-1',
      ]);
    } finally {
      redis.disconnect();
      await store.close();
    }
  });

  /** A store's accept of `user`'s alert at `minute`, in order. */
  function accepting(store: ReturnType<typeof createRedisStore>, user: string) {
    return (minute: number) => {
      const alert = alertOf(user, minute) as { userId: string; triggeredAt: string };
      return store.accept(
        { id: `${user}:${alert.triggeredAt}`, alert: alert as never, receivedAt: Date.now() },
        { dedupeTtlMs: 60_000, order: { user, at: Date.parse(alert.triggeredAt) } },
      );
    };
  }

  it("a completion goes on with its user's next alert in the same job, 16 in a row, then lets another user in", async () => {
    const prefix = newPrefix();
    const store = createRedisStore({ connection: server.url, prefix, leaseMs: 10_000 });
    const redis = new Redis(server.url);
    try {
      const [a, b] = [`long_${process.pid}`, `other_${process.pid}`];
      for (let minute = 1; minute <= 20; minute++) {
        expect(await accepting(store, a)(minute)).toBe('accepted');
      }
      expect(await accepting(store, b)(1)).toBe('accepted');
      // Only the first of each line waits; the others are parked behind it.
      expect(await store.counts()).toMatchObject({ waiting: 21, delayed: 0, active: 0 });
      expect(await redis.llen(store.bullQueue.toKey('wait'))).toBe(2);
      const take = (token: string) => ({ token, leaseMs: 10_000, perUser: true, wait: false });
      let taken = await store.take(take('t1'));
      const job = taken?.jobId;
      const seen: string[] = [];
      for (let i = 1; i <= 16; i++) {
        expect(taken?.id).toBe(`${a}:${String(alertOf(a, i).triggeredAt)}`);
        expect(taken?.jobId).toBe(job);
        expect(taken?.lapsed).toBe(false);
        expect(taken?.newest).toBe(Date.parse(String(alertOf(a, 20).triggeredAt)));
        seen.push(String(taken?.id));
        const done = await store.completeAndTake(
          String(taken?.jobId),
          `t${String(i)}`,
          take(`t${String(i + 1)}`),
        );
        expect(done.completed).toBe(true);
        taken = done.next;
      }
      // After 16 in a row the completion went BullMQ's way: the other user's alert came next,
      // and the long line's next alert was moved up to wait behind it.
      expect(taken?.id).toBe(`${b}:${String(alertOf(b, 1).triggeredAt)}`);
      const after = await store.completeAndTake(String(taken?.jobId), 't17', take('t18'));
      expect(after.next?.id).toBe(`${a}:${String(alertOf(a, 17).triggeredAt)}`);
      expect(after.next?.jobId).not.toBe(job);
      expect(after.next?.lapsed).toBe(false);
      // Each completed alert is counted, and stays a duplicate.
      expect(await store.counts()).toMatchObject({ completed: 17, active: 1, waiting: 3 });
      expect(await accepting(store, a)(2)).toBe('duplicate');
      // Its job is gone: the alert of minute 2 is not in BullMQ any more, but in the done set.
      expect(await redis.zcard(`${prefix}:order:done`)).toBe(15);
    } finally {
      redis.disconnect();
      await store.close();
    }
  });

  it('an alert accepted in order with `first` (run in the invocation that accepted it) is taken next when it is first of its line', async () => {
    const prefix = newPrefix();
    const store = createRedisStore({ connection: server.url, prefix, leaseMs: 10_000 });
    try {
      const [early, late] = [`early_${process.pid}`, `late_${process.pid}`];
      expect(await accepting(store, early)(1)).toBe('accepted');
      const alert = alertOf(late, 1) as { triggeredAt: string };
      const id = `${late}:${alert.triggeredAt}`;
      const order = { user: late, at: Date.parse(alert.triggeredAt) };
      const accepted = await store.accept(
        { id, alert: alert as never, receivedAt: Date.now() },
        { dedupeTtlMs: 60_000, order, first: true },
      );
      expect(accepted).toBe('accepted');
      const take = { token: 't1', leaseMs: 10_000, perUser: true, wait: false };
      expect((await store.take(take))?.id).toBe(id);
    } finally {
      await store.close();
    }
  });

  it('an alert a completion went on with is taken over like any other (lapsed, still first), and retried by its id when it fails', async () => {
    const prefix = newPrefix();
    const dying = createRedisStore({ connection: server.url, prefix, leaseMs: 300 });
    const store = createRedisStore({ connection: server.url, prefix, leaseMs: 300 });
    try {
      const user = `taken_${process.pid}`;
      const id = (minute: number) => `${user}:${String(alertOf(user, minute).triggeredAt)}`;
      for (let minute = 1; minute <= 3; minute++) {
        expect(await accepting(dying, user)(minute)).toBe('accepted');
      }
      const take = (token: string) => ({ token, leaseMs: 300, perUser: true, wait: false });
      const first = await dying.take(take('d1'));
      const second = (await dying.completeAndTake(String(first?.jobId), 'd1', take('d2'))).next;
      expect(second?.id).toBe(id(2));
      // The process dies holding it: past its lease, a reclaim puts the job back, and the alert
      // of minute 2 (not 3) is taken again, as a takeover.
      await new Promise((resolve) => setTimeout(resolve, 450));
      expect(await store.reclaimExpired()).toBe(1);
      const again = await store.take(take('s1'));
      expect(again?.id).toBe(id(2));
      expect(again?.lapsed).toBe(true);
      // It fails for good: the failed set lists it by its own id, and retry(id) puts it back.
      expect(
        await store.fail(String(again?.jobId), 's1', {
          outcome: 'failed',
          tries: 1,
          succeeded: [],
          error: new Error('CRM down'),
        }),
      ).toBe(true);
      expect((await store.failed()).map((alert) => alert.id)).toEqual([id(2)]);
      // The completed alert of minute 1 is not a failed one, whatever job held it.
      await expect(store.retry(id(1))).rejects.toThrow(TypeError);
      // The failure released the user: its alert of minute 3 runs next, then the retried one.
      const third = await store.take(take('s2'));
      expect(third?.id).toBe(id(3));
      await store.retry(id(2));
      const retried = (await store.completeAndTake(String(third?.jobId), 's2', take('s3'))).next;
      expect(retried?.id).toBe(id(2));
      expect(retried?.lapsed).toBe(false);
      expect(retried?.tries).toBe(0);
    } finally {
      await dying.close();
      await store.close();
    }
  });

  it('an accept in order after Redis lost its scripts (SCRIPT FLUSH) still records the order', async () => {
    const prefix = newPrefix();
    const web = receiverOn(queueOn(prefix), { consume: false });
    const redis = new Redis(server.url);
    try {
      const user = `flush_${process.pid}`;
      expect((await web.handle(deliveryOf(alertOf(user, 2)))).status).toBe(202);
      await redis.script('FLUSH');
      expect((await web.handle(deliveryOf(alertOf(user, 1)))).status).toBe(202);
      const again = await web.handle(deliveryOf(alertOf(user, 1)));
      expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
      const line = await redis.zrange(`${prefix}:order:line:${user}`, 0, -1, 'WITHSCORES');
      expect(line.filter((_, i) => i % 2 === 1)).toEqual([
        String(Date.parse(alertOf(user, 1).triggeredAt as string)),
        String(Date.parse(alertOf(user, 2).triggeredAt as string)),
      ]);
      expect(await redis.get(`${prefix}:order:newest:${user}`)).toBe(
        String(Date.parse(alertOf(user, 2).triggeredAt as string)),
      );
    } finally {
      redis.disconnect();
    }
  });
});
