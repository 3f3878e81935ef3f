import type { AlertStore, FailedAlert, StoredAlert } from './durable/alert-store.js';
import { createDurableQueue } from './durable/durable-queue.js';
import { nap } from './durable/timing.js';
import type { AlertQueue, QueuedAlert } from './receiver/alert-queue.js';
import { createReceiver } from './receiver/create-receiver.js';
import { NonRetryableError } from './errors/non-retryable-error.js';
import type { AlertContext, Receiver, RetryOptions } from './receiver/types.js';
import { signPayload } from './signature/sign.js';

/**
 * The test functions `storeContract` registers its cases with: vitest's, jest's, mocha's or
 * `node:test`'s `describe` and `it` all fit. The contract asserts on its own (it throws an `Error`
 * that says what differs), so no `expect` is needed.
 */
export interface ContractTestApi {
  /** Groups the contract's cases under `name` (the runner's `describe`). */
  describe(name: string, fn: () => void): unknown;
  /** `timeout` (ms) is passed as the third argument, as vitest, jest and bun take it. */
  it(name: string, fn: () => Promise<void>, timeout?: number): unknown;
}

/** What `storeContract` runs against. */
export interface StoreContractOptions {
  /** The back end's name, in the suite's title. */
  name: string;
  /**
   * A store instance for the case named `scope`. Every case makes two: instances made with the
   * same `scope` must share their data, as two processes on one Redis or one database do; other
   * scopes never see each other's alerts. The contract closes every store it made.
   */
  create(scope: string): AlertStore | Promise<AlertStore>;
  /**
   * A store whose back end does not answer (a Redis URL or a database port where nothing
   * listens): its `health()` must say so.
   */
  unreachable(): AlertStore | Promise<AlertStore>;
  /**
   * The lease the cases take alerts with, in ms. A store whose lease length is fixed when it is
   * made (BullMQ's `lockDuration`) must be made with it. Default 300.
   */
  leaseMs?: number;
  /** Milliseconds each case may take. Default 30,000. */
  timeoutMs?: number;
}

class ContractError extends Error {
  override readonly name = 'StoreContractError';
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new ContractError(`storeContract: ${message}`);
}
const same = (actual: unknown, expected: unknown, what: string): void => {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  check(a === b, `${what}: expected ${b}, got ${a}`);
};

const SECRET = 'whsec_store_contract';
let sequence = 0;

/** A fresh alert, as the receiver queues it. */
function queuedAlert(): QueuedAlert {
  sequence += 1;
  const triggeredAt = new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString();
  const userId = `contract_${String(sequence)}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    id: `${userId}:${triggeredAt}`,
    alert: {
      event: 'churn_risk_alert',
      userId,
      score: 0.8,
      tier: 'high',
      signals: ['activity_drop'],
      recommendation: 'Reach out.',
      triggeredAt,
    },
    receivedAt: Date.now(),
  };
}

/** A signed delivery of `alert` (default a fresh one), for `receiver.handle`. */
function delivery(alert: QueuedAlert = queuedAlert()): {
  method: string;
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(alert.alert);
  const { signature, timestamp } = signPayload({ body, secret: SECRET });
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-timestamp': timestamp,
    },
    body,
  };
}

const sleep = (ms: number): Promise<void> => nap(ms).done;

/** Asks `attempt` again every 25 ms until it gives a value, or fails the case after `ms`. */
async function eventually<T>(
  what: string,
  ms: number,
  attempt: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    check(Date.now() < deadline, `${what}: not within ${String(ms)} ms`);
    await sleep(25);
  }
}

let tokens = 0;
const token = (who: string): string => `${who}-${String(++tokens)}`;

/**
 * Registers the back-end contract of SPEC 17 as test cases: what every `AlertStore` must do so
 * that core's `createDurableQueue` loses no alert and runs no handler twice. Every case runs two
 * store instances on one back end (two processes). The store cases: atomic accept with dedupe,
 * exclusive take, takeover of an expired lease, fenced writes, delays, the record of succeeded
 * handlers across a failure and a retry, `retry` and `retryAll`, exact counts, health. Then the
 * receiver cases: two receivers on one store, end to end.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { storeContract } from '@churn-risk/core/testing';
 *
 * storeContract({ describe, it }, {
 *   name: 'postgres',
 *   create: (scope) => createPostgresStore({ connection: url, schema: `contract_${scope}` }),
 *   unreachable: () => createPostgresStore({ connection: 'postgres://127.0.0.1:1/none' }),
 * });
 */
export function storeContract(test: ContractTestApi, options: StoreContractOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 300;
  let scopes = 0;

  interface Fixture {
    a: AlertStore;
    b: AlertStore;
    scope: string;
    /** Receivers made in the case (closed after it, with their queues and stores). */
    receivers: Receiver[];
  }
  const run = (name: string, body: (fixture: Fixture) => Promise<void>): void => {
    test.it(
      name,
      async () => {
        const scope = `case${String(++scopes)}_${Date.now().toString(36)}`;
        const a = await options.create(scope);
        const b = await options.create(scope);
        const fixture: Fixture = { a, b, scope, receivers: [] };
        try {
          await body(fixture);
        } finally {
          await Promise.all(fixture.receivers.map((r) => r.close({ timeoutMs: timeout })));
          await Promise.allSettled([a.close(), b.close()]);
        }
      },
      timeout,
    );
  };
  /** Accepts `count` fresh alerts into `store`. */
  const accepted = async (store: AlertStore, count: number): Promise<QueuedAlert[]> => {
    const alerts = Array.from({ length: count }, queuedAlert);
    for (const alert of alerts) {
      same(await store.accept(alert, { dedupeTtlMs: 3_600_000 }), 'accepted', 'accept');
    }
    return alerts;
  };
  /** Takes from `store` until it hands something out. */
  const takeOne = (store: AlertStore, who: string): Promise<StoredAlert & { token: string }> =>
    eventually(`${who} takes an alert`, timeout / 2, async () => {
      const t = token(who);
      const taken = await store.take({ token: t, leaseMs });
      return taken === undefined ? undefined : { ...taken, token: t };
    });

  /**
   * Takes an alert whose lease expired from `store`, reclaiming first where the store reclaims on
   * demand (else its engine's own timer puts the alert back).
   */
  const takeOver = (
    store: AlertStore,
    who: string,
    lease = leaseMs,
  ): Promise<StoredAlert & { token: string }> =>
    eventually('the alert is taken over', timeout / 2, async () => {
      await store.reclaimExpired?.();
      const t = token(who);
      const taken = await store.take({ token: t, leaseMs: lease });
      return taken === undefined ? undefined : { ...taken, token: t };
    });

  test.describe(`storeContract: ${options.name}`, () => {
    run('20 parallel accepts of one alert give exactly one "accepted"', async ({ a, b }) => {
      const alert = queuedAlert();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? a : b).accept(alert, { dedupeTtlMs: 3_600_000 }),
        ),
      );
      same(answers.filter((x) => x === 'accepted').length, 1, 'accepted answers');
      same(answers.filter((x) => x === 'duplicate').length, 19, 'duplicate answers');
      same((await b.counts()).waiting, 1, 'alerts stored');
    });

    run('take is exclusive', async ({ a, b }) => {
      const alerts = await accepted(a, 3);
      const takes = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? a : b).take({ token: token(`t${String(i)}`), leaseMs: 60_000 }),
        ),
      );
      const got = takes.filter((x): x is StoredAlert => x !== undefined).map((x) => x.entry.id);
      same(got.length, 3, 'alerts handed out by 12 parallel takes of 3 alerts');
      same(new Set(got).size, 3, 'distinct alerts handed out');
      same([...got].sort(), alerts.map((x) => x.id).sort(), 'the alerts handed out');
      const more = await a.take({ token: token('late'), leaseMs: 60_000 });
      same(more, undefined, 'a take while all three are leased');
    });

    run(
      'an expired lease is taken over, marked lapsed; the stall count core writes is kept',
      async ({ a, b }) => {
        const [alert] = await accepted(a, 1);
        const first = await takeOne(a, 'a');
        same(first.entry.id, alert?.id, 'the alert taken');
        same([first.tries, first.stalls, first.lapsed], [0, 0, false], 'the first take');
        same(await b.take({ token: token('b'), leaseMs }), undefined, 'a take while leased');
        await sleep(leaseMs + 50);
        const second = await takeOver(b, 'b');
        same(second.entry.id, alert?.id, 'the alert taken over');
        same(second.entry.alert, alert?.alert, 'the alert as accepted');
        same([second.tries, second.stalls, second.lapsed], [0, 0, true], 'the takeover');
        same(await b.extend(second.id, second.token, leaseMs, 1), true, 'extend with stalls 1');
        await sleep(leaseMs + 50);
        const third = await takeOver(a, 'a');
        same([third.stalls, third.lapsed], [1, true], 'the second takeover (the count kept)');
        same(await a.extend(third.id, third.token, 60_000, 2), true, 'extend with stalls 2');
        same(
          await a.scheduleRetry(third.id, third.token, {
            delayMs: 0,
            tries: 1,
            succeeded: [],
            error: new Error('x'),
          }),
          true,
          'scheduleRetry',
        );
        const fourth = await takeOne(b, 'b');
        same([fourth.tries, fourth.stalls, fourth.lapsed], [1, 2, false], 'a take after a verdict');
      },
    );

    run(
      'reclaimExpired does the whole job at every call (stores that reclaim on demand)',
      async ({ a, b }) => {
        if (a.reclaimExpired === undefined || b.reclaimExpired === undefined) return;
        await accepted(a, 1);
        await takeOne(a, 'a');
        await sleep(leaseMs + 50);
        same(await b.reclaimExpired(), 1, 'alerts put back by the first reclaim');
        const again = await takeOne(b, 'b');
        same(again.lapsed, true, 'the alert put back is marked lapsed');
        await sleep(leaseMs + 50);
        // A store that skips a reclaim made soon after the last one (a check key that lives one
        // interval) adds up to one whole interval to every takeover.
        same(await a.reclaimExpired(), 1, 'alerts put back by a reclaim soon after the first');
        same(await a.reclaimExpired(), 0, 'a reclaim with nothing expired');
      },
    );

    run(
      'completeAndTake completes under the token and takes the next alert, exclusively',
      async ({ a, b }) => {
        const alerts = await accepted(a, 3);
        const first = await takeOne(a, 'a');
        same(first.entry.id, alerts[0]?.id, 'the oldest alert is taken first');
        const stale = token('stale');
        const refused = await b.completeAndTake(first.id, stale, { token: token('b'), leaseMs });
        same(refused.completed, false, 'completeAndTake with a token that holds nothing');
        same(refused.next?.entry.id, alerts[1]?.id, 'its take happens all the same');
        const nextToken = token('a');
        const done = await a.completeAndTake(first.id, first.token, {
          token: nextToken,
          leaseMs: 60_000,
        });
        same(done.completed, true, 'completeAndTake by the holder');
        same(done.next?.entry.id, alerts[2]?.id, 'the next alert taken');
        same([done.next?.tries, done.next?.lapsed], [0, false], 'the next alert as stored');
        same(await b.take({ token: token('b'), leaseMs }), undefined, 'a take while all leased');
        const last = done.next;
        check(last !== undefined, 'completeAndTake handed out an alert');
        if (last === undefined) return;
        same(await a.extend(last.id, nextToken, 60_000), true, 'the next alert is leased to it');
        const end = await a.completeAndTake(last.id, nextToken, { token: token('a'), leaseMs });
        same([end.completed, end.next], [true, undefined], 'completeAndTake with nothing due');
        same((await b.counts()).completed, 2, 'completed alerts');
      },
    );

    run('a write with a stale token is refused', async ({ a, b }) => {
      await accepted(a, 1);
      const first = await takeOne(a, 'a');
      await sleep(leaseMs + 50);
      const second = await takeOver(b, 'b', 60_000);
      const error = new Error('stale');
      same(await a.extend(first.id, first.token, leaseMs), false, 'extend with the stale token');
      same(
        await a.extend(first.id, first.token, leaseMs, 5),
        false,
        'extend with stalls and the stale token',
      );
      same(await a.complete(first.id, first.token), false, 'complete with the stale token');
      same(
        await a.scheduleRetry(first.id, first.token, {
          delayMs: 0,
          tries: 1,
          succeeded: ['x'],
          error,
        }),
        false,
        'scheduleRetry with the stale token',
      );
      same(
        await a.fail(first.id, first.token, { error, tries: 1, succeeded: ['x'] }),
        false,
        'fail with the stale token',
      );
      same(await b.extend(second.id, second.token, 60_000), true, 'extend by the holder');
      same(await b.complete(second.id, second.token), true, 'complete by the holder');
      same(await a.complete(second.id, second.token), false, 'a second complete');
      const counts = await a.counts();
      same([counts.completed, counts.failed], [1, 0], 'completed and failed after the writes');
    });

    run('nothing is taken before its delay', async ({ a, b }) => {
      await accepted(a, 1);
      const first = await takeOne(a, 'a');
      const delayMs = 1_000;
      const scheduled = Date.now();
      same(
        await a.scheduleRetry(first.id, first.token, {
          delayMs,
          tries: 7,
          succeeded: [],
          error: new Error('try 0'),
        }),
        true,
        'scheduleRetry',
      );
      same((await b.counts()).delayed, 1, 'delayed alerts');
      const again = await takeOne(b, 'b');
      const waited = Date.now() - scheduled;
      check(
        waited >= delayMs - 20,
        `the alert was taken ${String(waited)} ms after a ${String(delayMs)} ms delay`,
      );
      same(again.tries, 7, 'tries as core wrote them (the store counts none of its own)');
    });

    run(
      'the succeeded record is kept across a failure and a retry; retry resets tries',
      async ({ a, b }) => {
        const [alert] = await accepted(a, 1);
        const first = await takeOne(a, 'a');
        const error = new Error('Handler b failed');
        same(
          await a.scheduleRetry(first.id, first.token, {
            delayMs: 0,
            tries: 1,
            succeeded: ['a'],
            error,
          }),
          true,
          'scheduleRetry',
        );
        const second = await takeOne(b, 'b');
        same([second.tries, second.succeeded], [1, ['a']], 'tries and record at the second take');
        same(
          await b.fail(second.id, second.token, { error, tries: 2, succeeded: ['a', 'c'] }),
          true,
          'fail',
        );
        const failed = await a.failed();
        same(failed.length, 1, 'failed alerts');
        same(
          [failed[0]?.alertId, failed[0]?.succeededHandlers, failed[0]?.tries],
          [alert?.id, ['a', 'c'], 2],
          'the failed entry (identity, record, tries)',
        );
        check(/Handler b failed/.test(failed[0]?.error ?? ''), 'the failed entry keeps the error');
        await b.retry(failed[0]?.id ?? '');
        same((await a.failed()).length, 0, 'failed alerts after retry(id)');
        const third = await takeOne(a, 'a');
        same([third.tries, third.succeeded], [0, ['a', 'c']], 'tries and record after retry(id)');
      },
    );

    run('retry(id) resets tries and stalls, by job id or alert identity', async ({ a, b }) => {
      const [alert] = await accepted(a, 1);
      let taken = await takeOne(a, 'a');
      for (let tries = 1; tries < 3; tries++) {
        await a.scheduleRetry(taken.id, taken.token, {
          delayMs: 0,
          tries,
          succeeded: [],
          error: new Error('x'),
        });
        taken = await takeOne(a, 'a');
      }
      same(taken.tries, 2, 'tries before the failure');
      await a.fail(taken.id, taken.token, { error: new Error('x'), tries: 3, succeeded: [] });
      let refused = false;
      try {
        await b.retry('no-such-alert');
      } catch (error) {
        refused = error instanceof TypeError;
      }
      check(refused, 'retry of an unknown id rejects with a TypeError');
      await b.retry(alert?.id ?? '');
      const again = await takeOne(b, 'b');
      same([again.tries, again.stalls], [0, 0], 'tries and stalls after retry(identity)');
    });

    run(
      'retryAll takes a snapshot: each failed alert once, even when it fails again at once',
      async ({ a, b }) => {
        await accepted(a, 3);
        for (let i = 0; i < 3; i++) {
          const taken = await takeOne(a, 'a');
          await a.fail(taken.id, taken.token, {
            error: new Error('down'),
            tries: 1,
            succeeded: [],
          });
        }
        // B fails every alert again as soon as it is back, while A's retryAll runs.
        const state = { stop: false };
        let refailed = 0;
        const loop = (async () => {
          while (!state.stop) {
            const t = token('b');
            const taken = await b.take({ token: t, leaseMs: 60_000 });
            if (taken === undefined) {
              await sleep(5);
              continue;
            }
            refailed++;
            await b.fail(taken.id, t, { error: new Error('down again'), tries: 1, succeeded: [] });
          }
        })();
        let retried: number;
        try {
          retried = await Promise.race([
            a.retryAll(),
            sleep(timeout / 2).then(() => {
              throw new ContractError('storeContract: retryAll did not finish');
            }),
          ]);
          await eventually('the retried alerts are failed again', timeout / 4, async () =>
            refailed >= 3 && (await a.counts()).failed === 3 ? true : undefined,
          );
          await sleep(200);
        } finally {
          state.stop = true;
          await loop;
        }
        same(retried, 3, 'retryAll()');
        same(refailed, 3, 'tries after retryAll');
      },
    );

    run('counts are exact', async ({ a, b }) => {
      await accepted(a, 5);
      const error = new Error('x');
      const one = await takeOne(a, 'a');
      await a.complete(one.id, one.token);
      const two = await takeOne(b, 'b');
      await b.fail(two.id, two.token, { error, tries: 1, succeeded: [] });
      const three = await takeOne(a, 'a');
      await a.scheduleRetry(three.id, three.token, {
        delayMs: 600_000,
        tries: 1,
        succeeded: [],
        error,
      });
      await takeOne(b, 'b'); // stays active
      const expected = { waiting: 1, active: 1, delayed: 1, failed: 1, completed: 1 };
      same(await a.counts(), expected, 'counts from the first instance');
      same(await b.counts(), expected, 'counts from the second instance');
      same(await a.depth(), 2, 'depth (waiting and delayed)');
    });

    run('health() reports a store that is down', async ({ a }) => {
      same((await a.health()).reachable, true, 'a live store');
      const down = await options.unreachable();
      try {
        const health = await Promise.race([
          down.health(),
          sleep(timeout / 2).then(() => undefined),
        ]);
        check(health !== undefined, 'health() of a store that is down did not answer');
        same(health?.reachable, false, 'a store whose back end does not answer');
      } finally {
        await Promise.allSettled([down.close()]);
      }
    });

    run(
      "receiver.sweep: two sweeps at once run each due alert once, a dead taker's alert included",
      async (fixture) => {
        const { a, b } = fixture;
        const [first, second] = [a, b].map((store) =>
          createReceiver({
            secret: SECRET,
            queue: createDurableQueue(store, { leaseMs: 10_000 }),
            consume: false,
            concurrency: 4,
          }),
        );
        const runs = new Map<string, number>();
        const stalls: number[] = [];
        for (const receiver of [first, second] as Receiver[]) {
          fixture.receivers.push(receiver);
          receiver.on('churn_risk_alert', async (alert, context) => {
            runs.set(alert.userId, (runs.get(alert.userId) ?? 0) + 1);
            if (context.stalls > 0) stalls.push(context.stalls);
            await sleep(5);
          });
        }
        const alerts = Array.from({ length: 12 }, queuedAlert);
        for (const alert of alerts) {
          same((await (first as Receiver).handle(delivery(alert))).status, 202, 'the answer');
        }
        // A taker that dies (a frozen function): its alert is left under an expired lease.
        await takeOne(a, 'dead');
        await sleep(leaseMs + 50);
        const budgetMs = Math.max(5_000, timeout / 3);
        const results = await Promise.all(
          [first, second].map((receiver) => (receiver as Receiver).sweep({ budgetMs })),
        );
        const completed = results.reduce((sum, result) => sum + result.completed, 0);
        same(completed, 12, 'alerts completed by the two sweeps');
        same(runs.size, 12, 'alerts whose handler ran');
        same(
          [...runs.values()].filter((count) => count !== 1),
          [],
          'handler runs other than one per alert',
        );
        same(stalls, [1], 'context.stalls of the alert taken over');
        same((await a.counts()).completed, 12, 'completed in the store');
      },
    );

    // The receiver on top: two receivers (two processes) on one store, through createDurableQueue.
    receiverCases((name, body) => {
      run(name, (fixture) => {
        let next = 0;
        const platform: ReceiverPlatform = {
          queue: () =>
            createDurableQueue(next++ % 2 === 0 ? fixture.a : fixture.b, {
              leaseMs: 10_000,
              pollIntervalMs: 20,
            }),
          settle: async (receivers) => {
            for (const receiver of receivers) await receiver.drain({ timeoutMs: timeout });
          },
          failed: () => fixture.a.failed(),
          retry: (id) => fixture.b.retry(id),
          close: () => Promise.resolve(),
        };
        return body(platform, fixture.receivers);
      });
    }, timeout);
  });
}

/**
 * The back end under the receiver-level cases: each `queue()` is one more process's (or isolate's)
 * queue on the case's one shared back end. `createDurableQueue` over two store instances fits; so
 * does a push queue (`createPushQueue`) on a platform queue whose consumer runs the messages.
 */
export interface ReceiverPlatform {
  /** A queue for one more receiver on the shared back end. */
  queue(): AlertQueue;
  /**
   * Resolves once every alert the receivers accepted has reached its end (completed, or failed
   * and reported), retries included. `receivers` are the case's receivers, in creation order.
   */
  settle(receivers: readonly Receiver[]): Promise<void>;
  /** The failed store's alerts. */
  failed(): Promise<FailedAlert[]>;
  /** Puts a failed alert back (tries reset, the record of succeeded handlers kept). */
  retry(id: string): Promise<void>;
  /** Releases what the platform opened (called after the case's receivers are closed). */
  close(): Promise<void>;
}

/** What `pushQueueContract` runs against. */
export interface PushQueueContractOptions {
  /** The back end's name, in the suite's title. */
  name: string;
  /** A fresh shared back end for the case named `scope`; other scopes never see its alerts. */
  create(scope: string): ReceiverPlatform | Promise<ReceiverPlatform>;
  /** Milliseconds each case may take. Default 30,000. */
  timeoutMs?: number;
}

/**
 * Registers `storeContract`'s receiver-level cases against a queue that is not an `AlertStore`:
 * a push-based platform queue (Cloudflare Queues) run through `createPushQueue`. Two receivers
 * (two isolates) share one platform; the cases: two concurrent deliveries of one alert run its
 * handler once; only the failed handler is retried, in either receiver; after the last try
 * `onError` once per failed handler, and `retry(id)` runs it again; a `NonRetryableError` or
 * `shouldRetry` answering false ends the tries at once; health, and `503 CLOSED` after close.
 * Then the platform's failed store: it lists the newest failure first.
 *
 * @example
 * pushQueueContract({ describe, it }, { name: 'cloudflare-queues', create: (scope) => platformFor(scope) });
 */
export function pushQueueContract(test: ContractTestApi, options: PushQueueContractOptions): void {
  const timeout = options.timeoutMs ?? 30_000;
  let scopes = 0;
  const run = (name: string, body: ReceiverCase): void => {
    test.it(
      name,
      async () => {
        const scope = `case${String(++scopes)}_${Date.now().toString(36)}`;
        const platform = await options.create(scope);
        const receivers: Receiver[] = [];
        try {
          await body(platform, receivers);
        } finally {
          await Promise.all(receivers.map((r) => r.close({ timeoutMs: timeout })));
          await platform.close();
        }
      },
      timeout,
    );
  };
  test.describe(`pushQueueContract: ${options.name}`, () => {
    receiverCases(run, timeout);
    failedStoreCases(run);
  });
}

/** The push platform's failed store, as `failed()` lists it. */
function failedStoreCases(run: (name: string, body: ReceiverCase) => void): void {
  run('failed store: lists the newest failure first', async (platform, all) => {
    const receiver = createReceiver({ secret: SECRET, queue: platform.queue(), retries: 0 });
    all.push(receiver);
    receiver.on('churn_risk_alert', () => {
      throw new NonRetryableError('CRM down');
    });
    const earlier = queuedAlert();
    const later = queuedAlert();
    same((await receiver.handle(delivery(earlier))).status, 202, 'the first answer');
    await platform.settle(all);
    await sleep(5); // a store that keeps failure times in milliseconds tells the two apart
    same((await receiver.handle(delivery(later))).status, 202, 'the second answer');
    await platform.settle(all);
    same(
      (await platform.failed()).map((failed) => failed.alert.userId),
      [later.alert.userId, earlier.alert.userId],
      'failed(): the later failure first',
    );
  });
}

type ReceiverCase = (platform: ReceiverPlatform, receivers: Receiver[]) => Promise<void>;

/** The receiver-level cases, shared by `storeContract` and `pushQueueContract`. */
function receiverCases(run: (name: string, body: ReceiverCase) => void, timeout: number): void {
  const receiverOn = (
    platform: ReceiverPlatform,
    receivers: Receiver[],
    retries: number | RetryOptions = 0,
  ): Receiver => {
    const receiver = createReceiver({
      secret: SECRET,
      queue: platform.queue(),
      retries: typeof retries === 'number' ? { retries, backoffMs: () => 5 } : retries,
    });
    receivers.push(receiver);
    return receiver;
  };

  run(
    'receivers: two concurrent deliveries of one alert run its handler once',
    async (platform, all) => {
      const first = receiverOn(platform, all);
      const second = receiverOn(platform, all);
      const seen: [string, number][] = [];
      for (const [name, receiver] of [
        ['a', first],
        ['b', second],
      ] as const) {
        receiver.on(
          'churn_risk_alert',
          (_alert, c: AlertContext) => void seen.push([name, c.attempt]),
        );
      }
      const request = delivery();
      const answers = await Promise.all([first.handle(request), second.handle(request)]);
      same(
        answers.map((x) => x.status),
        [202, 202],
        'the answers',
      );
      same(
        answers.map((x) => x.body).sort(),
        ['{"received":true,"duplicate":true}', '{"received":true}'],
        'one accepted, one duplicate',
      );
      await platform.settle(all);
      same(seen.length, 1, 'handler runs');
      same(seen[0]?.[1], 0, 'the attempt');
    },
  );

  run('receivers: retries only the failed handler, in either process', async (platform, all) => {
    const receivers = [receiverOn(platform, all, 2), receiverOn(platform, all, 2)];
    const attempts: Record<string, number[]> = { ok: [], flaky: [] };
    const errors: unknown[] = [];
    for (const receiver of receivers) {
      receiver.on('churn_risk_alert', (_a, c) => void attempts.ok?.push(c.attempt), { id: 'ok' });
      receiver.on(
        'churn_risk_alert',
        (_a, c) => {
          attempts.flaky?.push(c.attempt);
          if (c.attempt < 2) throw new Error('not yet');
        },
        { id: 'flaky' },
      );
      receiver.onError((error) => void errors.push(error));
    }
    same((await receivers[0]?.handle(delivery()))?.status, 202, 'the answer');
    await platform.settle(all);
    same(attempts, { ok: [0], flaky: [0, 1, 2] }, 'the tries');
    same(errors.length, 0, 'onError calls');
  });

  run(
    'receivers: after the last try onError once per failed handler; retry(id) runs it again',
    async (platform, all) => {
      const receivers = [receiverOn(platform, all, 1), receiverOn(platform, all, 1)];
      let broken = true;
      let crmRuns = 0;
      let auditRuns = 0;
      const reported: [string, number][] = [];
      for (const receiver of receivers) {
        receiver.on(
          'churn_risk_alert',
          () => {
            auditRuns++;
          },
          { id: 'audit' },
        );
        receiver.on(
          'churn_risk_alert',
          () => {
            crmRuns++;
            if (broken) throw new Error('CRM down');
          },
          { id: 'crm' },
        );
        receiver.onError((error, _alert, context) => {
          reported.push([error instanceof Error ? error.message : String(error), context.attempt]);
        });
      }
      await receivers[1]?.handle(delivery());
      await platform.settle(all);
      same(reported, [['CRM down', 1]], 'onError calls');
      const failed = await platform.failed();
      same(failed.length, 1, 'failed alerts');
      check(
        /crm/.test(failed[0]?.error ?? ''),
        `the failed entry names the handler: ${failed[0]?.error ?? ''}`,
      );
      broken = false;
      await platform.retry(failed[0]?.id ?? '');
      await platform.settle(all);
      same([crmRuns, auditRuns], [3, 1], 'crm and audit runs after retry(id)');
      same((await platform.failed()).length, 0, 'failed alerts after the retry');
    },
  );

  run(
    'receivers: a NonRetryableError, or shouldRetry answering false, ends the tries at once (SPEC 18)',
    async (platform, all) => {
      const asked: number[] = [];
      const retries: RetryOptions = {
        retries: 3,
        backoffMs: () => 5,
        shouldRetry: (_error, attempt) => {
          asked.push(attempt);
          return attempt < 1;
        },
      };
      const receivers = [receiverOn(platform, all, retries), receiverOn(platform, all, retries)];
      const fatal = queuedAlert();
      const flaky = queuedAlert();
      const attempts: Record<string, number[]> = { fatal: [], flaky: [] };
      const reported: [string, number][] = [];
      for (const receiver of receivers) {
        receiver.on('churn_risk_alert', (alert, c) => {
          const fatalOne = alert.userId === fatal.alert.userId;
          attempts[fatalOne ? 'fatal' : 'flaky']?.push(c.attempt);
          throw fatalOne ? new NonRetryableError('no such account') : new Error('CRM down');
        });
        receiver.onError((error, _alert, context) => {
          reported.push([error instanceof Error ? error.name : String(error), context.attempt]);
        });
      }
      same((await receivers[0]?.handle(delivery(fatal)))?.status, 202, 'the first answer');
      same((await receivers[1]?.handle(delivery(flaky)))?.status, 202, 'the second answer');
      await platform.settle(all);
      same(attempts, { fatal: [0], flaky: [0, 1] }, 'the tries');
      // A NonRetryableError is never retried, without asking shouldRetry.
      same(asked, [0, 1], 'the attempts shouldRetry was asked about');
      same(
        reported.sort(),
        [
          ['Error', 1],
          ['NonRetryableError', 0],
        ],
        'onError calls (error, attempt)',
      );
      const failed = (await platform.failed()).map((f) => [f.alert.userId, f.tries]).sort();
      same(
        failed,
        [
          [fatal.alert.userId, 1],
          [flaky.alert.userId, 2],
        ].sort(),
        'the failed alerts and their tries',
      );
    },
  );

  run('receivers: health, and 503 CLOSED after close', async (platform, all) => {
    const receiver = receiverOn(platform, all);
    receiver.on('churn_risk_alert', () => undefined);
    const health = await receiver.health();
    same([health.ok, health.queue?.reachable], [true, true], 'health');
    await receiver.close({ timeoutMs: timeout });
    const answer = await receiver.handle(delivery());
    same(answer.status, 503, 'the status after close');
    const body = JSON.parse(answer.body) as { error?: { code?: string } };
    same(body.error?.code, 'CLOSED', 'the code after close');
    check(answer.headers['retry-after'] !== undefined, 'Retry-After is set');
  });
}
