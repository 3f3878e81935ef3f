// Order per user (`TakeOptions.perUser`): a user held by one alert from its take until it
// completes or fails for good, across the two stores of a fixture (two processes); the oldest
// `triggeredAt` of a user first; a retry keeps the place; a takeover releases nothing, and the
// alert taken over still goes first; the newest time accepted for a user seen by any process.
// Then the receivers on top: two of them, in order per user, with handlers that fail at random.
import { createReceiver } from '../create-receiver/create-receiver.js';
import { createDurableQueue } from '../processing/durable/durable-queue.js';
import type { AlertStore, StoreAcceptOptions } from '../processing/durable/alert-store.js';
import type { AlertRecord } from '../queue-port/alert-queue.js';
import type { StoreCaseKit } from './store-fixture.js';
import { check, delivery, SECRET, same, sleep, token } from './support.js';

const HOUR = 3_600_000;
let users = 0;

/** A fresh user id, unique across the cases and the runs that share a store. */
function freshUser(): string {
  return `ordered_${String(++users)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** An alert of `user`, triggered `minutes` after 2026-01-01 10:00 UTC. */
export function alertOf(user: string, minutes: number): AlertRecord<'accepted'> {
  const triggeredAt = new Date(Date.UTC(2026, 0, 1, 10, minutes)).toISOString();
  return {
    id: `${user}:${triggeredAt}`,
    alert: {
      event: 'churn_risk_alert',
      userId: user,
      score: 0.5 + minutes / 1000,
      tier: minutes % 2 === 0 ? 'high' : 'low',
      signals: ['activity_drop'],
      recommendation: 'Reach out.',
      triggeredAt,
    },
    receivedAt: Date.now(),
  };
}

/** The accept options of `entry` in order per user. */
function inOrder(entry: AlertRecord<'accepted'>): StoreAcceptOptions {
  return {
    dedupeTtlMs: HOUR,
    order: { user: entry.alert.userId, at: Date.parse(entry.alert.triggeredAt) },
  };
}

/** Accepts each alert in order per user, in the order given, alternating the two stores. */
async function acceptAll(
  stores: readonly AlertStore[],
  alerts: readonly AlertRecord<'accepted'>[],
): Promise<void> {
  for (const [index, entry] of alerts.entries()) {
    const store = stores[index % stores.length] as AlertStore;
    same(await store.accept(entry, inOrder(entry)), 'accepted', `accept ${entry.id}`);
  }
}

/** A take in order per user; the taken alert with its token, or undefined. */
async function takeInOrder(
  store: AlertStore,
  who: string,
  leaseMs = 60_000,
): Promise<(AlertRecord<'taken'> & { token: string }) | undefined> {
  const t = token(who);
  const taken = await store.take({ token: t, leaseMs, perUser: true, wait: false });
  return taken === undefined ? undefined : { ...taken, token: t };
}

/** Registers the cases of order per user. */
export function orderCases({ run, leaseMs, timeout }: StoreCaseKit): void {
  run('in order per user, two processes never hold two alerts of one user', async ({ a, b }) => {
    const [u, v] = [freshUser(), freshUser()];
    await acceptAll([a, b], [alertOf(u, 1), alertOf(u, 2), alertOf(v, 1), alertOf(u, 3)]);
    const takes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => takeInOrder(i % 2 === 0 ? a : b, `p${String(i)}`)),
    );
    const got = takes.filter((x) => x !== undefined).map((x) => x.id);
    same(got.length, 2, 'alerts handed out by 10 parallel takes (one per user)');
    same(
      [...got].sort(),
      [alertOf(u, 1).id, alertOf(v, 1).id].sort(),
      'the alerts handed out: the oldest of each user',
    );
    same(await takeInOrder(b, 'late'), undefined, 'a take while both users are held');
  });

  run(
    "a user's oldest waiting alert starts first, whatever the order of acceptance",
    async ({ a, b }) => {
      const u = freshUser();
      await acceptAll([a, b], [alertOf(u, 30), alertOf(u, 10), alertOf(u, 20)]);
      const order: string[] = [];
      for (const [index, store] of [a, b, a].entries()) {
        const taken = await takeInOrder(store, `o${String(index)}`);
        check(taken !== undefined, `take ${String(index + 1)} found the user's next alert`);
        if (taken === undefined) return;
        order.push(taken.alert.triggeredAt);
        same(await takeInOrder(index % 2 === 0 ? b : a, 'other'), undefined, 'a second take');
        same(await store.complete(taken.jobId, taken.token), true, 'complete');
      }
      same(
        order,
        [alertOf(u, 10), alertOf(u, 20), alertOf(u, 30)].map((x) => x.alert.triggeredAt),
        'the order of the takes',
      );
    },
  );

  run(
    'a retry waiting for its delay keeps its user; a failed alert releases it',
    async ({ a, b }) => {
      const u = freshUser();
      await acceptAll([a, b], [alertOf(u, 1), alertOf(u, 2), alertOf(u, 3)]);
      const first = await takeInOrder(a, 'r1');
      same(first?.id, alertOf(u, 1).id, 'the first take');
      if (first === undefined) return;
      const error = new Error('crm down');
      const verdict = { outcome: 'retry', delayMs: 400, tries: 1, succeeded: [], error } as const;
      same(await a.scheduleRetry(first.jobId, first.token, verdict), true, 'scheduleRetry');
      same(await takeInOrder(b, 'r2'), undefined, 'a take while the retry waits for its delay');
      await sleep(600);
      const again = await takeInOrder(b, 'r3');
      same(again?.id, first.id, 'the take after the delay: the retried alert');
      same(again?.tries, 1, 'its tries');
      if (again === undefined) return;
      const failed = { outcome: 'failed', tries: 2, succeeded: [], error } as const;
      same(await b.fail(again.jobId, again.token, failed), true, 'fail');
      same((await takeInOrder(a, 'r4'))?.id, alertOf(u, 2).id, 'the take after the failure');
    },
  );

  run('a lapsed lease holds its user until the takeover, which goes first', async ({ a, b }) => {
    const u = freshUser();
    await acceptAll([a, b], [alertOf(u, 1), alertOf(u, 2)]);
    const lost = await takeInOrder(a, 'dies', leaseMs);
    same(lost?.id, alertOf(u, 1).id, 'the first take');
    // The taker dies: until its alert is taken over, no other alert of the user is taken.
    same(await takeInOrder(b, 'meanwhile'), undefined, 'a take while the lease holds');
    const deadline = Date.now() + timeout / 2;
    let taken: Awaited<ReturnType<typeof takeInOrder>>;
    do {
      await sleep(50);
      await b.reclaimExpired?.();
      taken = await takeInOrder(b, 'takes-over');
    } while (taken === undefined && Date.now() < deadline);
    same(taken?.id, alertOf(u, 1).id, 'the alert taken over');
    same(taken?.lapsed, true, 'marked lapsed');
    if (taken === undefined) return;
    same(await takeInOrder(a, 'second'), undefined, 'a take while the takeover holds the user');
    same(await b.complete(taken.jobId, taken.token), true, 'complete');
    same((await takeInOrder(a, 'next'))?.id, alertOf(u, 2).id, 'the next take');
  });

  run('the newest time accepted for a user is seen by every process', async ({ a, b }) => {
    const u = freshUser();
    const [older, newer] = [alertOf(u, 1), alertOf(u, 9)];
    same(await a.accept(older, inOrder(older)), 'accepted', 'accept the older in a');
    same(await b.accept(newer, inOrder(newer)), 'accepted', 'accept the newer in b');
    same(await a.accept(older, inOrder(older)), 'duplicate', 'a duplicate');
    const first = await takeInOrder(a, 'n1');
    same(first?.id, older.id, 'the first take');
    same(first?.newest, Date.parse(newer.alert.triggeredAt), 'its newest: the newer alert');
    if (first === undefined) return;
    const done = await a.completeAndTake(first.jobId, first.token, {
      token: token('n2'),
      leaseMs: 60_000,
      perUser: true,
    });
    same(done.completed, true, 'completeAndTake completed');
    same(done.next?.id, newer.id, 'and took the next alert of the user');
    same(done.next?.newest, Date.parse(newer.alert.triggeredAt), 'whose newest is its own');
  });

  run('a failed alert retried is a waiting alert in order like any other', async ({ a, b }) => {
    const u = freshUser();
    await acceptAll([a, b], [alertOf(u, 1), alertOf(u, 2)]);
    const first = await takeInOrder(a, 'f1');
    check(first !== undefined, 'the first take found an alert');
    if (first === undefined) return;
    const error = new Error('crm down');
    await a.fail(first.jobId, first.token, { outcome: 'failed', tries: 1, succeeded: [], error });
    await b.retry(first.id);
    const next = await takeInOrder(b, 'f2');
    same(next?.id, first.id, 'the retried alert, older, is taken first');
    same(await takeInOrder(a, 'f3'), undefined, 'and holds its user');
  });

  run(
    'two receivers in order per user: no overlap, oldest first, every user ends with its newest',
    async (fixture) => {
      const { a, b } = fixture;
      const userIds = Array.from({ length: 6 }, freshUser);
      const alerts = userIds.flatMap((u) => [1, 2, 3, 4].map((minute) => alertOf(u, minute)));
      const running = new Map<string, string>();
      const overlaps: string[] = [];
      const started = new Map<string, string[]>();
      const written = new Map<string, string>();
      let random = 7;
      const roll = (): number => (random = (random * 48_271) % 2_147_483_647) / 2_147_483_647;
      const receivers = [a, b].map((store) => {
        const receiver = createReceiver({
          secret: SECRET,
          order: 'per-user',
          concurrency: 4,
          retries: { retries: 5, backoffMs: () => 30 },
          queue: createDurableQueue(store, { leaseMs: 10_000, pollIntervalMs: 20 }),
        });
        fixture.receivers.push(receiver);
        return receiver;
      });
      // Delivered in a shuffled order, half to each receiver, before any handler is registered
      // (a receiver takes alerts once it has one): every alert waits when the takes start.
      const shuffled = [...alerts].sort(() => roll() - 0.5);
      for (const [index, entry] of shuffled.entries()) {
        const answer = await (receivers[index % 2] as (typeof receivers)[number]).handle(
          delivery(entry),
        );
        same(answer.status, 202, `the answer to ${entry.id}`);
      }
      for (const receiver of receivers) {
        receiver.on(
          'churn_risk_alert',
          async (alert, context) => {
            const other = running.get(alert.userId);
            if (other !== undefined) overlaps.push(`${other} and ${context.id}`);
            running.set(alert.userId, context.id);
            if (context.attempt === 0) {
              const list = started.get(alert.userId) ?? [];
              list.push(alert.triggeredAt);
              started.set(alert.userId, list);
            }
            try {
              await sleep(roll() * 15);
              if (roll() < 0.3) throw new Error('transient');
              written.set(alert.userId, alert.triggeredAt);
            } finally {
              running.delete(alert.userId);
            }
          },
          { id: 'crm', superseded: 'skip' },
        );
      }
      for (const receiver of receivers) await receiver.drain({ timeoutMs: timeout });
      same(overlaps, [], 'alerts of one user that ran at the same time');
      for (const u of userIds) {
        const newest = alertOf(u, 4).alert.triggeredAt;
        same(written.get(u), newest, `the last write of ${u}`);
        const order = started.get(u) ?? [];
        same(
          order,
          [...order].sort(),
          `the first tries of ${u} started in the order of triggeredAt`,
        );
      }
      const failed = await a.failed();
      check(
        failed.every((entry) => !userIds.includes(entry.alert.userId)),
        'no alert failed for good',
      );
      same(
        receivers.map((receiver) => receiver.stats.failed),
        [0, 0],
        'handlers failed for good',
      );
    },
  );
}
