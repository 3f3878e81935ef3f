import { NonRetryableError, createReceiver } from '@churn-risk/core';
import type { AlertRecord, UserOrderKey } from '@churn-risk/core/store';
import { describe, expect, it } from 'vitest';
import type { D1Database } from './bindings.js';
import type { CloudflareQueue } from './cloudflare-queue.js';
import { D1Identities } from './d1-identities.js';
import { D1UserOrder, HOLD_MS, POSTPONE_MS } from './d1-order.js';
import { quietLogger } from '../../../test/support/quiet-logger.js';
import { D1Isolates, d1Databases, deliveryInit } from './d1.test-util.js';

// Queue mode's order per user in D1 (real D1: SQLite in workerd, through miniflare's bindings
// proxy): the claim of a user, its hold and how long it lasts, and the line of each user as
// `send` records it. The receiver-level cases are pushQueueContract's (cloudflare-queue.test.ts);
// order.workerd.test.ts runs the worker in workerd on miniflare's own Queues.

const SECRET = 'whsec_d1_order';

const freshDb = d1Databases(12);

const HOUR = 3_600_000;
const at = (minute: number): string => new Date(Date.UTC(2026, 4, 1, 10, minute)).toISOString();

/** The delivered message of `user`'s alert triggered at `minute`, and its order key. */
function alert(user: string, minute: number): [AlertRecord<'delivered'>, UserOrderKey] {
  const triggeredAt = at(minute);
  const message: AlertRecord<'delivered'> = {
    id: `${user}:${triggeredAt}`,
    alert: {
      event: 'churn_risk_alert',
      userId: user,
      score: 0.9,
      tier: 'high',
      signals: ['activity_drop'],
      recommendation: 'Reach out.',
      triggeredAt,
    },
    receivedAt: 0,
    tries: 0,
    succeeded: [],
  };
  return [message, { user, at: Date.parse(triggeredAt) }];
}

/**
 * An order over `db` on a clock the test moves (`clock.now`), and `record`, which claims an
 * alert's identity and records it in its user's line in one batch, as `send` does.
 */
function orderOn(db: D1Database): {
  order: D1UserOrder;
  identities: D1Identities;
  clock: { now: number };
  record: (id: string, key: UserOrderKey, ttlMs: number) => Promise<boolean>;
} {
  const clock = { now: Date.UTC(2026, 4, 1, 12) };
  const order = new D1UserOrder(db, () => clock.now);
  const identities = new D1Identities(db, () => clock.now);
  const record = (id: string, key: UserOrderKey, ttlMs: number): Promise<boolean> =>
    identities.claim(id, ttlMs, (expiresAt, now) =>
      order.recordStatements(id, key, expiresAt, now),
    );
  return { order, identities, clock, record };
}

describe('D1UserOrder', () => {
  it("holds a user for one alert, the oldest of the user's line first; the holder claims again", async () => {
    const { order, record } = orderOn(await freshDb());
    const [a1, a2, a3] = [1, 2, 3].map((minute) => alert('u', minute)) as [
      ReturnType<typeof alert>,
      ReturnType<typeof alert>,
      ReturnType<typeof alert>,
    ];
    // Recorded newest first: the line is by time, not by arrival.
    for (const [message, key] of [a3, a2, a1]) await record(message.id, key, HOUR);
    expect(await order.claim(...a2)).toEqual({ waitMs: POSTPONE_MS });
    expect(await order.claim(...a1)).toEqual({ newest: a3[1].at });
    expect(await order.claim(...a3)).toEqual({ waitMs: POSTPONE_MS });
    expect(await order.claim(...a1)).toEqual({ newest: a3[1].at }); // a retry, a redelivery
    await order.release(...a1);
    expect(await order.claim(...a3)).toEqual({ waitMs: POSTPONE_MS }); // a2 is older
    expect(await order.claim(...a2)).toEqual({ newest: a3[1].at });
    // Another user is not held by any of them.
    const [b1, b1key] = alert('v', 9);
    expect(await order.claim(b1, b1key)).toEqual({ newest: b1key.at });
  });

  it('a hold lapses HOLD_MS after its claim: a consumer that died holds its user no longer', async () => {
    const { order, clock, record } = orderOn(await freshDb());
    const [a1, a2] = [alert('dies', 1), alert('dies', 2)];
    for (const [message, key] of [a1, a2]) await record(message.id, key, 24 * HOUR);
    expect(await order.claim(...a1)).toHaveProperty('newest');
    clock.now += HOLD_MS - 1;
    expect(await order.claim(...a2)).toEqual({ waitMs: POSTPONE_MS });
    clock.now += 1;
    // The lapsed holder no longer blocks, though it is older and not done.
    expect(await order.claim(...a2)).toHaveProperty('newest');
    expect(await order.claim(...a1)).toEqual({ waitMs: POSTPONE_MS });
  });

  it("a retry keeps the hold through its delay, and the others wait for the retry's time", async () => {
    const { order, clock, record } = orderOn(await freshDb());
    const [a1, a2] = [alert('retry', 1), alert('retry', 2)];
    for (const [message, key] of [a1, a2]) await record(message.id, key, 24 * HOUR);
    expect(await order.claim(...a1)).toHaveProperty('newest');
    expect(order.holding.has(a1[0])).toBe(true);
    await order.holdFor(a1[0], HOUR);
    clock.now += HOLD_MS;
    expect(await order.claim(...a2)).toEqual({ waitMs: HOUR - HOLD_MS });
    clock.now += HOUR - HOLD_MS; // the retry is due: it still holds its user
    expect(await order.claim(...a2)).toEqual({ waitMs: POSTPONE_MS });
    expect(await order.claim(...a1)).toHaveProperty('newest'); // the retry, due
    await order.release(...a1);
    expect(order.holding.has(a1[0])).toBe(false);
    expect(await order.claim(...a2)).toHaveProperty('newest');
  });

  it('a user with no row (accepted before order per user, or swept) is held by its first claim', async () => {
    const { order } = orderOn(await freshDb());
    const [a1, key] = alert('unrecorded', 1);
    expect(await order.claim(a1, key)).toEqual({ newest: key.at });
    const [a2, key2] = alert('unrecorded', 2);
    expect(await order.claim(a2, key2)).toEqual({ waitMs: POSTPONE_MS });
  });

  it('the newest time lasts as long as the identities; the sweep deletes what expired', async () => {
    const db = await freshDb();
    const { order, identities, clock, record } = orderOn(db);
    const [old, oldKey] = alert('sweep', 1);
    const [, newKey] = alert('sweep', 5);
    await record(old.id, oldKey, HOUR);
    await record(`${old.id}:newer`, newKey, HOUR);
    expect(await order.claim(old, oldKey)).toEqual({ newest: newKey.at });
    await order.release(old, oldKey);
    clock.now += HOUR;
    await identities.sweep((now) => order.sweepStatements(now));
    const count = async (table: string): Promise<number> =>
      (await db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())?.n ?? -1;
    expect(await count('churn_risk_identities')).toBe(0);
    expect(await count('churn_risk_user_alerts')).toBe(0);
    expect(await count('churn_risk_users')).toBe(0);
  });
});

/** One shared platform (Queues in memory, real D1) and its isolates, in order per user. */
class Platform extends D1Isolates {
  constructor(db: D1Database, dedupe = true) {
    super(db, { maxRetries: 1, dedupe });
  }
}

const delivery = (
  userId: string,
  minute: number,
): { method: string; headers: Record<string, string>; body: string } =>
  deliveryInit({ userId, triggeredAt: at(minute) }, SECRET);

const quiet = { logger: quietLogger };

/** A receiver in order per user on `isolate`, logging each run (`minute@attempt`) into `runs`. */
function orderedOn(
  isolate: CloudflareQueue,
  runs: string[],
  fails: (minute: number, attempt: number) => boolean = () => false,
) {
  const receiver = createReceiver({
    secret: SECRET,
    order: 'per-user',
    queue: isolate.queue,
    retries: { retries: 1, backoffMs: () => 5 },
    ...quiet,
  });
  receiver.on('churn_risk_alert', (a, { attempt }) => {
    const minute = new Date(a.triggeredAt).getUTCMinutes();
    runs.push(`${String(minute)}@${String(attempt)}`);
    if (fails(minute, attempt)) throw new NonRetryableError('no such account');
  });
  return receiver;
}

describe('createCloudflareQueue in order per user', () => {
  it("records each alert once in its user's line, with the identity: a duplicate changes nothing", async () => {
    const platform = new Platform(await freshDb());
    const runs: string[] = [];
    const [first, second] = [
      orderedOn(platform.isolate(), runs),
      orderedOn(platform.isolate(), runs),
    ];
    expect((await first.handle(delivery('dup', 5))).status).toBe(202);
    expect((await first.handle(delivery('dup', 1))).body).toBe('{"received":true}');
    expect((await second.handle(delivery('dup', 1))).body).toContain('"duplicate":true');
    const line = await platform.db
      .prepare('SELECT at, done FROM churn_risk_user_alerts WHERE user_id = ?1 ORDER BY at')
      .bind('dup')
      .all();
    expect(line.results).toEqual([
      { at: Date.parse(at(1)), done: 0 },
      { at: Date.parse(at(5)), done: 0 },
    ]);
    const user = await platform.db
      .prepare('SELECT newest, holder FROM churn_risk_users WHERE user_id = ?1')
      .bind('dup')
      .first();
    expect(user).toEqual({ newest: Date.parse(at(5)), holder: null });
    await platform.settle();
    expect(runs).toEqual(['1@0', '5@0']);
  });

  it("a send that fails takes the alert out of its user's line: it blocks no later alert", async () => {
    const platform = new Platform(await freshDb());
    const runs: string[] = [];
    const receiver = orderedOn(platform.isolate(), runs);
    platform.queues.failSends = true;
    expect((await receiver.handle(delivery('sendfails', 1))).status).toBe(503);
    platform.queues.failSends = false;
    expect((await receiver.handle(delivery('sendfails', 2))).status).toBe(202);
    const rows = await platform.db
      .prepare('SELECT at FROM churn_risk_user_alerts WHERE user_id = ?1')
      .bind('sendfails')
      .all();
    expect(rows.results).toEqual([{ at: Date.parse(at(2)) }]);
    await platform.settle();
    expect(runs).toEqual(['2@0']);
  });

  it('without dedupe (identities in the isolate), the line is kept in the failed database', async () => {
    const platform = new Platform(await freshDb(), false);
    const runs: string[] = [];
    const receivers = [orderedOn(platform.isolate(), runs), orderedOn(platform.isolate(), runs)];
    for (const [index, minute] of [3, 1, 2].entries()) {
      const receiver = receivers[index % 2];
      expect((await receiver?.handle(delivery('nodedupe', minute)))?.status).toBe(202);
    }
    await platform.settle();
    expect(runs).toEqual(['1@0', '2@0', '3@0']);
  });

  it("a failed alert retried waits in its user's line again, before the user's later alerts", async () => {
    const platform = new Platform(await freshDb());
    const runs: string[] = [];
    let failing = true;
    const isolate = platform.isolate();
    const receiver = orderedOn(isolate, runs, (minute) => failing && minute === 1);
    expect((await receiver.handle(delivery('retried', 1))).status).toBe(202);
    await platform.settle();
    expect(await isolate.failed.count()).toBe(1);
    failing = false;
    // The later alert is sent first, then the failed one is sent back: it still goes first.
    expect((await receiver.handle(delivery('retried', 2))).status).toBe(202);
    expect(await isolate.failed.retryAll()).toBe(1);
    await platform.settle();
    expect(runs).toEqual(['1@0', '1@0', '2@0']);
  });
});
