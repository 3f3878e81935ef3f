import { createReceiver, type Receiver } from '@churn-risk/core';
import type { AlertRecord, AlertStore, StoreAcceptOptions } from '@churn-risk/core/store';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { spawnTs, type NodeProcess } from '../../../test/support/node-process.js';
import { createPostgresQueue, createPostgresStore, type PostgresAlertStore } from '../src/index.js';
import { MIGRATIONS, statements } from '../src/sql.js';
import { deliveryOf, makeAlert, SECRET, sql as sqlOn, until, usePostgres } from './helpers.js';

// Order per user on a real PostgreSQL: each user's head of line is the only alert of the user a
// take can see, the user's later alerts queue behind it (under the database's per-user lock);
// takes in order from several stores and receivers at once, and a worker killed while it holds a
// user.

const postgres = usePostgres();
const sql = (text: string, values: unknown[] = []): Promise<pg.QueryResult> =>
  sqlOn(postgres.url, text, values);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const HOUR = 3_600_000;

/** A deterministic random in [0, 1) (Lehmer), so that a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
}

/** `triggeredAt` of minute `minute` after 2026-01-01 10:00 UTC. */
const at = (minute: number): string => new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();

/** The stored entry of `user`'s alert at `minute`, as core hands it to `accept`. */
function entryOf(user: string, minute: number): AlertRecord<'accepted'> {
  const alert = makeAlert({ userId: user, triggeredAt: at(minute) });
  return {
    id: `${user}:${at(minute)}`,
    alert: alert as unknown as AlertRecord<'accepted'>['alert'],
    receivedAt: Date.now(),
  };
}

/** The accept options of `entry` in order per user. */
function inOrder(entry: AlertRecord<'accepted'>, dedupeTtlMs = HOUR): StoreAcceptOptions {
  return {
    dedupeTtlMs,
    order: { user: entry.alert.userId, at: Date.parse(entry.alert.triggeredAt) },
  };
}

/** A store of its own pool: as another process would have. */
function storeOn(schema: string): PostgresAlertStore {
  return createPostgresStore({ connection: postgres.url, schema, pollIntervalMs: 50 });
}

/** `list` shuffled with `random`. */
/** Creates `schema` as the versions up to `version` left it (the migrations of that time). */
async function schemaAt(schema: string, version: number): Promise<void> {
  const text = statements(schema);
  await sql(text.createSchema);
  await sql(text.createMigrations);
  for (const migration of MIGRATIONS.slice(0, version)) {
    await sql(migration.sql.replaceAll('{schema}', schema));
    await sql(text.recordMigration, [migration.version]);
  }
}

function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe('order per user on PostgreSQL', () => {
  it('migrates a schema at version 1 in place: its alerts stay, and a take in order takes them', async () => {
    const schema = 'from_v1';
    await schemaAt(schema, 1);
    const old = entryOf('old_user', 1);
    await sql(`INSERT INTO ${schema}.alerts (alert_id, entry) VALUES ($1, $2)`, [
      old.id,
      JSON.stringify(old),
    ]);
    const store = storeOn(schema);
    try {
      const taken = await store.take({ token: 't', leaseMs: 60_000, perUser: true, wait: false });
      expect(taken?.id).toBe(old.id);
      expect(taken?.newest).toBeUndefined(); // accepted without order: no user to order by
      const versions = await sql(`SELECT version FROM ${schema}.migrations ORDER BY version`);
      expect(versions.rows).toEqual([1, 2, 3, 4, 5].map((version) => ({ version })));
      const fresh = entryOf('new_user', 2);
      expect(await store.accept(fresh, inOrder(fresh))).toBe('accepted');
      const next = await store.take({ token: 'u', leaseMs: 60_000, perUser: true, wait: false });
      expect([next?.id, next?.newest]).toEqual([fresh.id, Date.parse(at(2))]);
    } finally {
      await store.close();
    }
  });

  it('migrates a schema at version 2 with users held: the holder stays first, the other alerts queue behind their heads', async () => {
    const schema = 'from_v2';
    await schemaAt(schema, 2);
    // Written as version 2 wrote them: `u`'s alert at minute 5 holds it (running, leased to
    // `old`), its alerts at minutes 1 and 3 wait; `v` has two waiting alerts and no holder.
    const row = async (user: string, minute: number, holds: boolean): Promise<void> => {
      const entry = entryOf(user, minute);
      await sql(
        `INSERT INTO ${schema}.alerts (alert_id, entry, user_id, order_at, holds, state,
          lease_token, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '1 hour')`,
        [
          entry.id,
          JSON.stringify(entry),
          user,
          Date.parse(at(minute)),
          holds,
          holds ? 'active' : 'waiting',
          holds ? 'old' : null,
        ],
      );
    };
    await row('u', 5, true);
    await row('u', 3, false);
    await row('u', 1, false);
    await row('v', 4, false);
    await row('v', 2, false);
    const store = storeOn(schema);
    try {
      const take = (token: string): Promise<AlertRecord<'taken'> | undefined> =>
        store.take({ token, leaseMs: 60_000, perUser: true, wait: false });
      const first = await take('a');
      expect(first?.id).toBe(entryOf('v', 2).id); // u is held: only v's oldest can start
      expect(await take('b')).toBeUndefined();
      const { rows } = await sql(`SELECT id FROM ${schema}.alerts WHERE lease_token = 'old'`);
      const holder = (rows[0] as { id: string }).id;
      const next = await store.completeAndTake(holder, 'old', {
        token: 'c',
        leaseMs: 60_000,
        perUser: true,
      });
      expect([next.completed, next.next?.id]).toEqual([true, entryOf('u', 1).id]);
      const states = await sql(
        `SELECT alert_id, state FROM ${schema}.alerts ORDER BY user_id, order_at`,
      );
      expect(states.rows).toEqual([
        { alert_id: entryOf('u', 1).id, state: 'active' },
        { alert_id: entryOf('u', 3).id, state: 'queued' },
        { alert_id: entryOf('v', 2).id, state: 'active' },
        { alert_id: entryOf('v', 4).id, state: 'queued' },
      ]);
    } finally {
      await store.close();
    }
  });

  it('only a user’s head waits where takes look: the later alerts queue, an older alert goes before a head that never started', async () => {
    const schema = 'head_of_line';
    const store = storeOn(schema);
    const states = async (): Promise<Record<string, string>> => {
      const { rows } = await sql(`SELECT alert_id, state FROM ${schema}.alerts`);
      return Object.fromEntries(
        (rows as { alert_id: string; state: string }[]).map((r) => [r.alert_id, r.state]),
      );
    };
    try {
      const [m3, m5, m1, m0] = [entryOf('u', 3), entryOf('u', 5), entryOf('u', 1), entryOf('u', 0)];
      for (const entry of [m3, m5]) await store.accept(entry, inOrder(entry));
      expect(await states()).toEqual({ [m3.id]: 'waiting', [m5.id]: 'queued' });
      // Older than the head, which has not started: it becomes the head.
      await store.accept(m1, inOrder(m1));
      expect(await states()).toEqual({ [m1.id]: 'waiting', [m3.id]: 'queued', [m5.id]: 'queued' });
      expect(await store.counts()).toMatchObject({ waiting: 3, active: 0 });
      const taken = await store.take({ token: 't', leaseMs: 60_000, perUser: true, wait: false });
      expect([taken?.id, taken?.newest]).toEqual([m1.id, Date.parse(at(5))]);
      // Older still, but the head has started: it queues first behind it.
      await store.accept(m0, inOrder(m0));
      expect(await states()).toMatchObject({ [m1.id]: 'active', [m0.id]: 'queued' });
      expect(await store.take({ token: 'x', leaseMs: 60_000, perUser: true, wait: false })).toBe(
        undefined,
      );
      // Failed for good: the user's next (the oldest queued) moves up at once.
      await store.fail(taken?.jobId ?? '', 't', {
        outcome: 'failed',
        tries: 1,
        succeeded: [],
        error: new Error('crm down'),
      });
      const next = await store.take({ token: 'y', leaseMs: 60_000, perUser: true, wait: false });
      expect(next?.id).toBe(m0.id);
      // Put back, the failed alert queues in its turn behind the running head.
      await store.retry(taken?.jobId ?? '');
      expect(await states()).toMatchObject({ [m0.id]: 'active', [m1.id]: 'queued' });
      await store.complete(next?.jobId ?? '', 'y');
      const after = await store.take({ token: 'z', leaseMs: 60_000, perUser: true, wait: false });
      expect(after?.id).toBe(m1.id);
    } finally {
      await store.close();
    }
  });

  it('an accept that comes while the end of the user’s head holds the user’s lock waits for it, and joins the line that end left', async () => {
    for (const ending of ['COMMIT', 'ROLLBACK'] as const) {
      const schema = `lock_${ending.toLowerCase()}`;
      const store = storeOn(schema);
      const other = new pg.Client({ connectionString: postgres.url });
      await other.connect();
      try {
        const head = entryOf('u', 1);
        await store.accept(head, inOrder(head));
        const taken = await store.take({ token: 'h', leaseMs: 60_000, perUser: true, wait: false });
        // Another process ends the head: the user's lock, the row gone, the line empty.
        await other.query('BEGIN');
        await other.query(`SELECT pg_advisory_xact_lock(hashtext($1), hashtext('u'))`, [schema]);
        await other.query(`DELETE FROM ${schema}.alerts WHERE id = $1`, [taken?.jobId]);
        await other.query(`UPDATE ${schema}.alert_users SET head = NULL WHERE user_id = 'u'`);
        const later = entryOf('u', 2);
        let settled = false;
        const accepting = store.accept(later, inOrder(later)).finally(() => {
          settled = true;
        });
        await until(async () => {
          const { rows } = await sql(
            `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'advisory'`,
          );
          return (rows[0] as { n: number }).n > 0;
        }, 'the accept to wait for the user’s lock');
        expect(settled).toBe(false);
        await other.query(ending);
        expect(await accepting).toBe('accepted');
        const { rows } = await sql(
          `SELECT alert_id, state FROM ${schema}.alerts ORDER BY order_at`,
        );
        // Committed: the line was empty, the new alert is the head. Rolled back: it queues
        // behind the head, still running.
        expect(rows).toEqual(
          ending === 'COMMIT'
            ? [{ alert_id: later.id, state: 'waiting' }]
            : [
                { alert_id: head.id, state: 'active' },
                { alert_id: later.id, state: 'queued' },
              ],
        );
      } finally {
        await other.end();
        await store.close();
      }
    }
  });

  it('four stores taking in order at once, accepts arriving out of order meanwhile: one alert of a user at a time, its oldest waiting first, a retry keeps its place, nothing lost', async () => {
    const schema = 'four_stores';
    const random = seeded(11);
    const stores = Array.from({ length: 4 }, () => storeOn(schema));
    const users = Array.from({ length: 6 }, (_, i) => `stress_${String(i)}`);
    const minutes = Array.from({ length: 12 }, (_, i) => i + 1);
    const plan = shuffled(
      users.flatMap((user) => minutes.map((minute) => ({ user, minute }))),
      random,
    );
    const total = plan.length;
    /**
     * By user, the minutes of the alerts that wait: accepted (or retried), and not started since.
     * A take of a user's alert starts (`started`) before the write that releases the user, so a
     * user's takes are seen here in the order the database made them.
     */
    const waiting = new Map<string, Set<number>>(users.map((u) => [u, new Set<number>()]));
    /** Takes of each alert so far: an alert taken before its accept or retry resolved here. */
    const takes = new Map<string, number>();
    const running = new Map<string, number>();
    const retrying = new Map<string, number>(); // a user's alert waiting for its retry's delay
    const failedIds: string[] = [];
    const problems: string[] = [];
    let completed = 0;
    let tokens = 0;
    const minuteOf = (taken: AlertRecord<'taken'>): number =>
      new Date(taken.alert.triggeredAt).getUTCMinutes();

    /** Checks a take's alert against what waited when the take began. */
    const started = (taken: AlertRecord<'taken'>, before: Map<string, Set<number>>): void => {
      const user = taken.alert.userId;
      const minute = minuteOf(taken);
      const other = running.get(user);
      if (other !== undefined) problems.push(`${user}: ${String(minute)} while ${String(other)}`);
      running.set(user, minute);
      const retried = retrying.get(user);
      if (retried !== undefined && retried !== minute) {
        problems.push(`${user}: ${String(minute)} before its retry of ${String(retried)}`);
      }
      retrying.delete(user);
      // Older alerts that waited when the take began and that no take started since.
      const now = waiting.get(user);
      const older = [...(before.get(user) ?? [])].filter((m) => m < minute && now?.has(m));
      if (retried === undefined && older.length > 0) {
        problems.push(`${user}: ${String(minute)} before ${older.join(', ')}`);
      }
      waiting.get(user)?.delete(minute);
      takes.set(taken.id, (takes.get(taken.id) ?? 0) + 1);
    };
    const snapshot = (): Map<string, Set<number>> =>
      new Map([...waiting].map(([user, set]) => [user, new Set(set)]));

    const taker = async (store: AlertStore): Promise<void> => {
      let taken: AlertRecord<'taken'> | undefined;
      let token = '';
      while (completed < total) {
        if (taken === undefined) {
          token = `t${String(++tokens)}`;
          const before = snapshot();
          taken = await store.take({ token, leaseMs: 60_000, perUser: true, wait: false });
          if (taken === undefined) {
            await sleep(3);
            continue;
          }
          started(taken, before);
        }
        const current: AlertRecord<'taken'> = taken;
        const user = current.alert.userId;
        const minute = minuteOf(current);
        await sleep(random() * 4);
        const roll = random();
        running.delete(user); // the write below releases the user, once it commits
        taken = undefined;
        if (roll < 0.2) {
          retrying.set(user, minute);
          const error = new Error('transient');
          const retry = {
            outcome: 'retry',
            delayMs: 15,
            tries: current.tries + 1,
            succeeded: [],
            error,
          } as const;
          expect(await store.scheduleRetry(current.jobId, token, retry)).toBe(true);
        } else if (roll < 0.28) {
          const error = new Error('failed for good');
          const failed = {
            outcome: 'failed',
            tries: current.tries + 1,
            succeeded: [],
            error,
          } as const;
          expect(await store.fail(current.jobId, token, failed)).toBe(true);
          failedIds.push(current.id);
        } else if (roll < 0.64) {
          completed++;
          expect(await store.complete(current.jobId, token)).toBe(true);
        } else {
          completed++;
          const nextToken = `t${String(++tokens)}`;
          const before = snapshot();
          const done = await store.completeAndTake(current.jobId, token, {
            token: nextToken,
            leaseMs: 60_000,
            perUser: true,
          });
          expect(done.completed).toBe(true);
          if (done.next !== undefined) {
            taken = done.next;
            token = nextToken;
            started(taken, before);
          }
        }
      }
    };
    // The failed alerts are retried a little later, from any store: waiting again, in order.
    const retrier = async (): Promise<void> => {
      while (completed < total) {
        const id = failedIds.shift();
        if (id === undefined) {
          await sleep(5);
          continue;
        }
        await sleep(random() * 10);
        const store = stores[Math.floor(random() * stores.length)] as AlertStore;
        const before = takes.get(id);
        await store.retry(id);
        const [user = '', triggeredAt = ''] = id.split(/:(.*)/s);
        if (takes.get(id) === before) waiting.get(user)?.add(new Date(triggeredAt).getUTCMinutes());
      }
    };
    // Half the alerts wait before the takers start; the other half arrive while they run, in an
    // order that is not their users' order.
    const accept = async (part: typeof plan): Promise<void> => {
      for (const [index, { user, minute }] of part.entries()) {
        const entry = entryOf(user, minute);
        const store = stores[index % stores.length] as AlertStore;
        expect(await store.accept(entry, inOrder(entry))).toBe('accepted');
        if (!takes.has(entry.id)) waiting.get(user)?.add(minute);
        if (index % 3 === 0) await sleep(1);
      }
    };
    try {
      await accept(plan.slice(0, total / 2));
      await Promise.all([
        accept(plan.slice(total / 2)),
        retrier(),
        ...stores.flatMap((store) => [taker(store), taker(store), taker(store)]),
      ]);
      expect(problems).toEqual([]);
      expect(completed).toBe(total);
      expect(await stores[0]?.counts()).toMatchObject({
        waiting: 0,
        active: 0,
        delayed: 0,
        failed: 0,
      });
      const held = await sql(`SELECT count(*)::int AS n FROM ${schema}.alerts WHERE holds`);
      expect(held.rows).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  }, 120_000);

  it('two receivers in order per user, transient failures: no overlap, oldest first, a retry keeps its place, the newest written last, nothing lost', async () => {
    const schema = 'two_receivers';
    const random = seeded(29);
    const queue = (): ReturnType<typeof createPostgresQueue> =>
      createPostgresQueue({
        connection: postgres.url,
        schema,
        leaseMs: 10_000,
        reclaimIntervalMs: 1_000,
        pollIntervalMs: 50,
      });
    const web = createReceiver({
      secret: SECRET,
      queue: queue(),
      consume: false,
      order: 'per-user',
    });
    postgres.open.receivers.push(web);
    const users = Array.from({ length: 10 }, (_, i) => `pair_${String(i)}`);
    const minutes = [1, 2, 3, 4, 5, 6];
    const plan = shuffled(
      users.flatMap((user) => minutes.map((minute) => ({ user, minute }))),
      random,
    );
    // Every alert waits before the workers start (a receiver takes once it has a handler).
    for (const { user, minute } of plan) {
      const answer = await web.handle(
        deliveryOf(makeAlert({ userId: user, triggeredAt: at(minute) })),
      );
      expect(answer.status).toBe(202);
    }
    const running = new Map<string, string>();
    const overlaps: string[] = [];
    const runs = new Map<string, string[]>(); // per user, the alert of each handler run
    const written = new Map<string, string[]>(); // per user, the alerts whose handler succeeded
    const queues = [queue(), queue()];
    const workers: Receiver[] = queues.map((workerQueue) => {
      const receiver = createReceiver({
        secret: SECRET,
        queue: workerQueue,
        order: 'per-user',
        concurrency: 4,
        retries: { retries: 12, backoffMs: () => 20 },
      });
      postgres.open.receivers.push(receiver);
      return receiver;
    });
    for (const receiver of workers) {
      receiver.on('churn_risk_alert', async (alert, context) => {
        const other = running.get(alert.userId);
        if (other !== undefined) overlaps.push(`${other} and ${context.id}`);
        running.set(alert.userId, context.id);
        runs.set(alert.userId, [...(runs.get(alert.userId) ?? []), alert.triggeredAt]);
        try {
          await sleep(random() * 8);
          if (random() < 0.3) throw new Error('transient');
          written.set(alert.userId, [...(written.get(alert.userId) ?? []), alert.triggeredAt]);
        } finally {
          running.delete(alert.userId);
        }
      });
    }
    await until(
      () => [...written.values()].reduce((n, list) => n + list.length, 0) === plan.length,
      'every alert written',
      60_000,
    );
    expect(overlaps).toEqual([]);
    const inOrderOfTime = minutes.map(at);
    for (const user of users) {
      // Oldest first, each once, none lost; the newest is the last write.
      expect(written.get(user)).toEqual(inOrderOfTime);
      // A retry keeps its place: the runs of one alert are never split by another alert's run.
      const blocks = (runs.get(user) ?? []).filter((x, i, all) => i === 0 || all[i - 1] !== x);
      expect(blocks).toEqual(inOrderOfTime);
    }
    expect(await queues[0]?.failed()).toEqual([]);
    expect(workers.map((receiver) => receiver.stats.failed)).toEqual([0, 0]);
  }, 90_000);

  it('a worker SIGKILLed while it holds a user: its alert is taken over first, then the user’s others, oldest first', async () => {
    const schema = 'killed_holder';
    const leaseMs = 1_500;
    const reclaimIntervalMs = 300;
    const dir = mkdtempSync(join(tmpdir(), 'order-kill-'));
    const logFile = join(dir, 'worker.log');
    const holdUser = 'hold_user';
    const queue = (): ReturnType<typeof createPostgresQueue> =>
      createPostgresQueue({
        connection: postgres.url,
        schema,
        leaseMs,
        reclaimIntervalMs,
        pollIntervalMs: 50,
      });
    const web = createReceiver({
      secret: SECRET,
      queue: queue(),
      consume: false,
      order: 'per-user',
    });
    postgres.open.receivers.push(web);
    const heldMinutes = [3, 1, 5, 2, 4]; // delivered out of order
    const others = ['other_a', 'other_b', 'other_c'];
    const ids: string[] = [];
    for (const minute of heldMinutes) {
      await web.handle(deliveryOf(makeAlert({ userId: holdUser, triggeredAt: at(minute) })));
      ids.push(`${holdUser}:${at(minute)}`);
    }
    for (const user of others) {
      for (const minute of [2, 1]) {
        await web.handle(deliveryOf(makeAlert({ userId: user, triggeredAt: at(minute) })));
        ids.push(`${user}:${at(minute)}`);
      }
    }
    const script = fileURLToPath(new URL('./order-worker.ts', import.meta.url));
    let worker: NodeProcess | undefined;
    try {
      worker = spawnTs(script, {
        DATABASE_URL: postgres.url,
        SCHEMA: schema,
        SECRET,
        LOG_FILE: logFile,
        LEASE_MS: String(leaseMs),
        RECLAIM_MS: String(reclaimIntervalMs),
        HOLD_USER: holdUser,
        HOLD_MS: '600000',
      });
      await worker.waitForLines(/^worker ready/);
      const oldest = `${holdUser}:${at(1)}`;
      const logged = (): string[] => {
        try {
          return readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
        } catch {
          return [];
        }
      };
      await until(() => logged().includes(`start ${oldest} ${String(worker?.pid)}`), 'the hold');
      worker.kill('SIGKILL');
      await worker.exited;
      const startedByWorker = logged()
        .filter((line) => line.startsWith('start '))
        .map((line) => line.split(' ')[1] ?? '');
      // The worker held the user by its oldest alert: no other alert of the user started there.
      expect(startedByWorker.filter((id) => id.startsWith(`${holdUser}:`))).toEqual([oldest]);
      const doneByWorker = new Set(
        logged()
          .filter((line) => line.startsWith('done '))
          .map((line) => line.split(' ')[1] ?? ''),
      );

      // The takeover: another worker, in order per user too.
      const runs: { id: string; stalls: number }[] = [];
      let running = 0;
      let overlaps = 0;
      const rescuer = createReceiver({ secret: SECRET, queue: queue(), order: 'per-user' });
      postgres.open.receivers.push(rescuer);
      rescuer.on('churn_risk_alert', async (alert, context) => {
        if (alert.userId === holdUser && ++running > 1) overlaps++;
        runs.push({ id: context.id, stalls: context.stalls });
        await sleep(5);
        if (alert.userId === holdUser) running--;
      });
      await until(
        () => ids.every((id) => doneByWorker.has(id) || runs.some((run) => run.id === id)),
        'every alert done',
        30_000,
      );
      const held = runs.filter((run) => run.id.startsWith(`${holdUser}:`));
      expect(held.map((run) => run.id)).toEqual([1, 2, 3, 4, 5].map((m) => `${holdUser}:${at(m)}`));
      expect(held[0]?.stalls).toBe(1); // the alert taken over, first
      expect(overlaps).toBe(0);
    } finally {
      worker?.kill('SIGKILL');
      await worker?.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('remembers the newest time of a user for dedupeTtlMs after its last acceptance, then sweeps it', async () => {
    const schema = 'newest_expiry';
    const store = storeOn(schema);
    try {
      const [newer, older] = [entryOf('u', 5), entryOf('u', 1)];
      expect(await store.accept(newer, inOrder(newer, 300))).toBe('accepted');
      expect(await store.accept(older, inOrder(older, 300))).toBe('accepted');
      expect(await store.accept(older, inOrder(entryOf('u', 9), 300))).toBe('duplicate');
      const first = await store.take({ token: 'a', leaseMs: 60_000, perUser: true, wait: false });
      expect([first?.id, first?.newest]).toEqual([older.id, Date.parse(at(5))]);
      await store.complete(first?.jobId ?? '', 'a');
      await sleep(400); // the user's newest time expired with the identities
      const later = entryOf('u', 0);
      expect(await store.accept(later, inOrder(later, 60_000))).toBe('accepted');
      const next = await store.take({ token: 'b', leaseMs: 60_000, perUser: true, wait: false });
      expect([next?.id, next?.newest]).toEqual([later.id, Date.parse(at(0))]);
      const gone = entryOf('w', 1);
      await store.accept(gone, inOrder(gone, 100));
      // A user whose line is not empty keeps its row (its head) past the expiry.
      const stays = entryOf('k', 1);
      await store.accept(stays, inOrder(stays, 100));
      await sleep(200);
      const last = await store.take({ token: 'w', leaseMs: 60_000, perUser: true, wait: false });
      expect(last?.id).toBe(gone.id);
      await store.complete(last?.jobId ?? '', 'w');
      await store.reclaimExpired(); // a consuming process sweeps, once a minute at most
      await until(async () => {
        const { rows } = await sql(`SELECT user_id FROM ${schema}.alert_users ORDER BY user_id`);
        return JSON.stringify(rows) === JSON.stringify([{ user_id: 'k' }, { user_id: 'u' }]);
      }, 'the expired user to go');
      // Its newest time is forgotten all the same.
      const kept = await store.take({ token: 'k', leaseMs: 60_000, perUser: true, wait: false });
      expect([kept?.id, kept?.newest]).toEqual([stays.id, Date.parse(at(1))]);
    } finally {
      await store.close();
    }
  });

  it('an acceptance moves its user’s expiry only when less than dedupeTtlMs is left, a tenth further: the user’s row is updated in place', async () => {
    const schema = 'users_in_place';
    const store = storeOn(schema);
    /**
     * `user`'s row: its expiry (µs since the epoch), how far away it is now (ms), its newest time
     * and its version.
     */
    const row = async (
      user: string,
    ): Promise<{ expires: number; left: number; newest: number; version: string }> => {
      const { rows } = await sql(
        `SELECT (extract(epoch FROM expires_at) * 1000000)::bigint::text AS expires,
          (extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms,
          newest_at::text AS newest, xmin::text AS version
         FROM ${schema}.alert_users WHERE user_id = $1`,
        [user],
      );
      const r = rows[0] as { expires: string; left_ms: number; newest: string; version: string };
      return {
        expires: Number(r.expires),
        left: r.left_ms,
        newest: Number(r.newest),
        version: r.version,
      };
    };
    const accept = async (user: string, minute: number, ttl = HOUR): Promise<void> => {
      const entry = entryOf(user, minute);
      expect(await store.accept(entry, inOrder(entry, ttl))).toBe('accepted');
    };
    try {
      await accept('u', 1);
      const fresh = await row('u');
      expect(fresh.left).toBeGreaterThan(HOUR); // the TTL, and a tenth of it
      expect(fresh.left).toBeLessThanOrEqual(HOUR * 1.1);
      // Newer alerts of the user: the newest time moves, the expiry (still an hour away) stays.
      for (let minute = 2; minute <= 61; minute++) await accept('u', minute);
      const later = await row('u');
      expect([later.expires, later.newest]).toEqual([fresh.expires, Date.parse(at(61))]);
      expect(later.left).toBeGreaterThanOrEqual(HOUR);
      // The head runs; an older alert queues behind it and leaves the user's row as it was.
      const head = await store.take({ token: 'a', leaseMs: 60_000, perUser: true, wait: false });
      expect(head?.id).toBe(entryOf('u', 1).id);
      await accept('u', 0);
      expect(await row('u')).toEqual({ ...later, left: expect.any(Number) as number });
      // Less than the TTL left: the expiry moves, the TTL and a tenth away, then stays again.
      await accept('v', 1, 20_000);
      const v1 = await row('v');
      await sleep(2_100);
      await accept('v', 2, 20_000);
      const v2 = await row('v');
      expect(v2.expires).toBeGreaterThan(v1.expires);
      expect(v2.left).toBeGreaterThanOrEqual(20_000);
      expect(v2.left).toBeLessThanOrEqual(22_000);
      await accept('v', 3, 20_000);
      expect((await row('v')).expires).toBe(v2.expires);
      // A longer expiry is never brought back by a shorter TTL.
      await accept('u', 62, 1_000);
      expect((await row('u')).expires).toBe(later.expires);
      // Every update of the users' rows but the one that moved v's expiry stayed on its page
      // (HOT): the statistics, once the store's connections have closed and sent them.
      await store.close();
      let counts = { updates: 0, hot: 0 };
      await until(async () => {
        const { rows } = await sql(
          `SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
           WHERE schemaname = $1 AND relname = 'alert_users'`,
          [schema],
        );
        counts = rows[0] as { updates: number; hot: number };
        return counts.updates >= 60;
      }, 'the statistics of alert_users');
      expect(counts.hot).toBe(counts.updates - 1);
    } finally {
      await store.close();
    }
  });

  it('migrates a schema at version 3: the users’ rows get room to be updated in place, and an acceptance moves the expiry only when it must', async () => {
    const schema = 'from_v3';
    await schemaAt(schema, 3);
    // An alert accepted by version 3's function, its user's expiry the TTL away.
    const old = entryOf('u', 1);
    await sql(statements(schema).acceptInOrder, [
      old.id,
      JSON.stringify(old),
      HOUR,
      false,
      'u',
      Date.parse(at(1)),
    ]);
    /** The user's expiry, µs since the epoch. */
    const expiry = async (): Promise<number> => {
      const { rows } = await sql(
        `SELECT (extract(epoch FROM expires_at) * 1000000)::bigint::text AS expires
         FROM ${schema}.alert_users WHERE user_id = 'u'`,
      );
      return Number((rows[0] as { expires: string }).expires);
    };
    const before = await expiry();
    const store = storeOn(schema);
    try {
      const later = entryOf('u', 2);
      expect(await store.accept(later, inOrder(later))).toBe('accepted');
      const versions = await sql(`SELECT version FROM ${schema}.migrations ORDER BY version`);
      expect(versions.rows).toEqual([1, 2, 3, 4, 5].map((version) => ({ version })));
      const { rows } = await sql(
        `SELECT reloptions FROM pg_catalog.pg_class WHERE oid = '${schema}.alert_users'::regclass`,
      );
      expect(rows).toEqual([{ reloptions: ['fillfactor=50'] }]);
      // Less than the TTL was left (version 3 wrote exactly the TTL): moved a tenth further.
      const moved = await expiry();
      expect(moved).toBeGreaterThan(before);
      const latest = entryOf('u', 3);
      expect(await store.accept(latest, inOrder(latest))).toBe('accepted');
      expect(await expiry()).toBe(moved);
      const taken = await store.take({ token: 't', leaseMs: 60_000, perUser: true, wait: false });
      expect([taken?.id, taken?.newest]).toEqual([old.id, Date.parse(at(3))]);
    } finally {
      await store.close();
    }
  });

  it('a take in order reads indexes in order, not every waiting alert, even on statistics of an empty table', async () => {
    const schema = 'ordered_plan';
    const store = storeOn(schema);
    try {
      // 3,000 alerts of 1,000 users; drained, and the drained table's statistics (what a vacuum
      // last saw); then as many again: each user seems to have no alert, and has three.
      const burst = async (round: number): Promise<void> => {
        for (let i = 0; i < 3000; i += 30) {
          await Promise.all(
            Array.from({ length: 30 }, (_, j) => {
              const n = i + j;
              const entry = entryOf(`plan_${String(n % 1000)}`, round * 10 + Math.floor(n / 1000));
              return store.accept(entry, inOrder(entry));
            }),
          );
        }
      };
      await burst(0);
      let tokens = 0;
      const drainer = async (): Promise<void> => {
        for (;;) {
          const token = `d${String(++tokens)}`;
          const taken = await store.take({ token, leaseMs: 60_000, perUser: true, wait: false });
          if (taken === undefined) return;
          await store.complete(taken.jobId, token);
        }
      };
      while ((await store.depth()) > 0) await Promise.all(Array.from({ length: 10 }, drainer));
      await sql(`VACUUM ANALYZE ${schema}.alerts`);
      await burst(1);
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      let plan: string;
      try {
        // The plans of the statements in the functions too: auto_explain, to this client.
        const notices: string[] = [];
        client.on('notice', (notice) => notices.push(notice.message ?? ''));
        await client.query(`LOAD 'auto_explain'`);
        await client.query('SET auto_explain.log_min_duration = 0');
        await client.query('SET auto_explain.log_nested_statements = on');
        await client.query(`SET auto_explain.log_level = 'notice'`);
        await client.query('SET plan_cache_mode = force_generic_plan');
        const text = statements(schema);
        const taken = await client.query<{ id: string }>(text.takeInOrder, ['t', 60_000]);
        let id = taken.rows[0]?.id;
        // Going on with the user's next alert, then moving it up and taking the oldest due.
        for (const sticky of [true, false]) {
          const { rows } = await client.query<{ id: string; completed: number }>(
            text.completeAndTakeInOrder,
            [id, 't', 't', 60_000, sticky],
          );
          expect(rows[0]?.completed).toBe(1);
          id = rows[0]?.id;
        }
        const later = entryOf('plan_1', 99);
        const { user, at: time } = inOrder(later).order ?? { user: '', at: 0 };
        await client.query(text.acceptInOrder, [
          later.id,
          JSON.stringify(later),
          HOUR,
          false,
          user,
          time,
        ]);
        plan = notices.join('\n');
      } finally {
        await client.end();
      }
      for (const index of ['alerts_due', 'alerts_queue', 'alert_users_pkey', 'alerts_pkey']) {
        expect(plan).toContain(`using ${index}`);
      }
      expect(plan).not.toMatch(/Seq Scan|Sort|Bitmap/);
    } finally {
      await store.close();
    }
  }, 120_000);
});
