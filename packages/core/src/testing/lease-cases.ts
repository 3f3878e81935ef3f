// Accept and take, and who holds an alert: atomic accept with dedupe, an exclusive take, an alert
// accepted to go first, the takeover of an expired lease (marked lapsed, the stall count kept), a
// reclaim that does its whole job at every call, completeAndTake under the token, and writes
// fenced by the lease token.
import type { AlertRecord } from '../queue-port/alert-queue.js';
import type { StoreCaseKit } from './store-fixture.js';
import { check, queuedAlert, same, sleep, token } from './support.js';

/** Registers the cases of accept, take and the lease. */
export function leaseCases({ run, accepted, takeOne, takeOver, leaseMs }: StoreCaseKit): void {
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
    const got = takes.filter((x): x is AlertRecord<'taken'> => x !== undefined).map((x) => x.id);
    same(got.length, 3, 'alerts handed out by 12 parallel takes of 3 alerts');
    same(new Set(got).size, 3, 'distinct alerts handed out');
    same([...got].sort(), alerts.map((x) => x.id).sort(), 'the alerts handed out');
    const more = await a.take({ token: token('late'), leaseMs: 60_000 });
    same(more, undefined, 'a take while all three are leased');
  });

  run(
    'an alert accepted with first is taken before the alerts already due, the newest first',
    async ({ a, b }) => {
      const older = await accepted(a, 2);
      const [x, y] = [queuedAlert(), queuedAlert()];
      same(await a.accept(x, { dedupeTtlMs: 3_600_000, first: true }), 'accepted', 'accept x');
      same(await b.accept(y, { dedupeTtlMs: 3_600_000, first: true }), 'accepted', 'accept y');
      const order: string[] = [];
      for (const [store, who] of [
        [a, 'a1'],
        [b, 'b1'],
        [a, 'a2'],
        [b, 'b2'],
      ] as const) {
        order.push((await takeOne(store, who)).id);
      }
      same(order, [y.id, x.id, ...older.map((alert) => alert.id)], 'the take order');
    },
  );

  run(
    'an expired lease is taken over, marked lapsed; the stall count core writes is kept',
    async ({ a, b }) => {
      const [alert] = await accepted(a, 1);
      const first = await takeOne(a, 'a');
      same(first.id, alert?.id, 'the alert taken');
      same([first.tries, first.stalls, first.lapsed], [0, 0, false], 'the first take');
      same(await b.take({ token: token('b'), leaseMs }), undefined, 'a take while leased');
      await sleep(leaseMs + 50);
      const second = await takeOver(b, 'b');
      same(second.id, alert?.id, 'the alert taken over');
      same(second.alert, alert?.alert, 'the alert as accepted');
      same([second.tries, second.stalls, second.lapsed], [0, 0, true], 'the takeover');
      same(await b.extend(second.jobId, second.token, leaseMs, 1), true, 'extend with stalls 1');
      await sleep(leaseMs + 50);
      const third = await takeOver(a, 'a');
      same([third.stalls, third.lapsed], [1, true], 'the second takeover (the count kept)');
      same(await a.extend(third.jobId, third.token, 60_000, 2), true, 'extend with stalls 2');
      same(
        await a.scheduleRetry(third.jobId, third.token, {
          outcome: 'retry',
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
      same(first.id, alerts[0]?.id, 'the oldest alert is taken first');
      const stale = token('stale');
      const refused = await b.completeAndTake(first.jobId, stale, { token: token('b'), leaseMs });
      same(refused.completed, false, 'completeAndTake with a token that holds nothing');
      same(refused.next?.id, alerts[1]?.id, 'its take happens all the same');
      const nextToken = token('a');
      const done = await a.completeAndTake(first.jobId, first.token, {
        token: nextToken,
        leaseMs: 60_000,
      });
      same(done.completed, true, 'completeAndTake by the holder');
      same(done.next?.id, alerts[2]?.id, 'the next alert taken');
      same([done.next?.tries, done.next?.lapsed], [0, false], 'the next alert as stored');
      same(await b.take({ token: token('b'), leaseMs }), undefined, 'a take while all leased');
      const last = done.next;
      check(last !== undefined, 'completeAndTake handed out an alert');
      if (last === undefined) return;
      same(await a.extend(last.jobId, nextToken, 60_000), true, 'the next alert is leased to it');
      const end = await a.completeAndTake(last.jobId, nextToken, { token: token('a'), leaseMs });
      same([end.completed, end.next], [true, undefined], 'completeAndTake with nothing due');
      same((await b.counts()).completed, 2, 'completed alerts');
    },
  );

  run(
    'completeAndTake by a taker whose lease was taken over is refused, and takes the next',
    async ({ a, b }) => {
      await accepted(a, 1);
      const first = await takeOne(a, 'a');
      await sleep(leaseMs + 50);
      const second = await takeOver(b, 'b', 60_000);
      same(second.jobId, first.jobId, 'the same alert taken over');
      const [waiting] = await accepted(a, 1);
      // The first thing `a` writes after losing the lease: a store that remembers what it handed
      // out must still ask who holds the alert now.
      const late = await a.completeAndTake(first.jobId, first.token, {
        token: token('a'),
        leaseMs: 60_000,
      });
      same(late.completed, false, 'completeAndTake with the lost lease');
      same(late.next?.id, waiting?.id, 'its take happens all the same');
      same(await b.extend(second.jobId, second.token, 60_000), true, 'the new holder keeps it');
      same(await b.complete(second.jobId, second.token), true, 'complete by the new holder');
      same((await b.counts()).completed, 1, 'completed alerts');
    },
  );

  run('a write with a stale token is refused', async ({ a, b }) => {
    await accepted(a, 1);
    const first = await takeOne(a, 'a');
    await sleep(leaseMs + 50);
    const second = await takeOver(b, 'b', 60_000);
    const error = new Error('stale');
    same(await a.extend(first.jobId, first.token, leaseMs), false, 'extend with the stale token');
    same(
      await a.extend(first.jobId, first.token, leaseMs, 5),
      false,
      'extend with stalls and the stale token',
    );
    same(await a.complete(first.jobId, first.token), false, 'complete with the stale token');
    same(
      await a.scheduleRetry(first.jobId, first.token, {
        outcome: 'retry',
        delayMs: 0,
        tries: 1,
        succeeded: ['x'],
        error,
      }),
      false,
      'scheduleRetry with the stale token',
    );
    same(
      await a.fail(first.jobId, first.token, {
        outcome: 'failed',
        error,
        tries: 1,
        succeeded: ['x'],
      }),
      false,
      'fail with the stale token',
    );
    same(await b.extend(second.jobId, second.token, 60_000), true, 'extend by the holder');
    same(await b.complete(second.jobId, second.token), true, 'complete by the holder');
    same(await a.complete(second.jobId, second.token), false, 'a second complete');
    const counts = await a.counts();
    same([counts.completed, counts.failed], [1, 0], 'completed and failed after the writes');
  });
}
