// Retries, scheduled and from the failed set: nothing is taken before its delay (with the tries
// core wrote, and the store tells when it falls due), the record of succeeded handlers kept across a failure and a retry, `retry(id)` by
// job id or alert identity, and a `retryAll` that retries each failed alert once.
import type { StoreCaseKit } from './store-fixture.js';
import { ContractError, check, eventually, same, sleep, token } from './support.js';

/** Registers the cases of delayed retries and of the failed set's `retry` and `retryAll`. */
export function retryCases({ run, accepted, takeOne, timeout }: StoreCaseKit): void {
  run('nothing is taken before its delay', async ({ a, b }) => {
    await accepted(a, 1);
    same(await b.nextDueInMs(), undefined, 'nextDueInMs with nothing delayed');
    const first = await takeOne(a, 'a');
    const delayMs = 1_000;
    const scheduled = Date.now();
    same(
      await a.scheduleRetry(first.jobId, first.token, {
        outcome: 'retry',
        delayMs,
        tries: 7,
        succeeded: [],
        error: new Error('try 0'),
      }),
      true,
      'scheduleRetry',
    );
    same((await b.counts()).delayed, 1, 'delayed alerts');
    const dueIn = await b.nextDueInMs();
    const elapsed = Date.now() - scheduled;
    check(
      dueIn !== undefined && dueIn <= delayMs && dueIn >= delayMs - elapsed - 50,
      `nextDueInMs ${String(dueIn)} ${String(elapsed)} ms after a ${String(delayMs)} ms delay`,
    );
    const again = await takeOne(b, 'b');
    const waited = Date.now() - scheduled;
    check(
      waited >= delayMs - 20,
      `the alert was taken ${String(waited)} ms after a ${String(delayMs)} ms delay`,
    );
    same(again.tries, 7, 'tries as core wrote them (the store counts none of its own)');
    same(await a.nextDueInMs(), undefined, 'nextDueInMs once the retry was taken');
  });

  run(
    'the succeeded record is kept across a failure and a retry; retry resets tries',
    async ({ a, b }) => {
      const [alert] = await accepted(a, 1);
      const first = await takeOne(a, 'a');
      const error = new Error('Handler b failed');
      same(
        await a.scheduleRetry(first.jobId, first.token, {
          outcome: 'retry',
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
        await b.fail(second.jobId, second.token, {
          outcome: 'failed',
          error,
          tries: 2,
          succeeded: ['a', 'c'],
        }),
        true,
        'fail',
      );
      const failed = await a.failed();
      same(failed.length, 1, 'failed alerts');
      same(
        [failed[0]?.id, failed[0]?.succeeded, failed[0]?.tries],
        [alert?.id, ['a', 'c'], 2],
        'the failed entry (identity, record, tries)',
      );
      check(/Handler b failed/.test(failed[0]?.error ?? ''), 'the failed entry keeps the error');
      await b.retry(failed[0]?.jobId ?? '');
      same((await a.failed()).length, 0, 'failed alerts after retry(id)');
      const third = await takeOne(a, 'a');
      same([third.tries, third.succeeded], [0, ['a', 'c']], 'tries and record after retry(id)');
    },
  );

  run('retry(id) resets tries and stalls, by job id or alert identity', async ({ a, b }) => {
    const [alert] = await accepted(a, 1);
    let taken = await takeOne(a, 'a');
    for (let tries = 1; tries < 3; tries++) {
      await a.scheduleRetry(taken.jobId, taken.token, {
        outcome: 'retry',
        delayMs: 0,
        tries,
        succeeded: [],
        error: new Error('x'),
      });
      taken = await takeOne(a, 'a');
    }
    same(taken.tries, 2, 'tries before the failure');
    await a.fail(taken.jobId, taken.token, {
      outcome: 'failed',
      error: new Error('x'),
      tries: 3,
      succeeded: [],
    });
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
        await a.fail(taken.jobId, taken.token, {
          outcome: 'failed',
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
          await b.fail(taken.jobId, t, {
            outcome: 'failed',
            error: new Error('down again'),
            tries: 1,
            succeeded: [],
          });
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
}
