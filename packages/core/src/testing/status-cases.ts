// What the tools read from a store: exact counts from either instance, and a health() that asks.
import type { StoreCaseKit } from './store-fixture.js';
import type { StoreContractOptions } from './store-fixture.js';
import { check, same, sleep } from './support.js';

/** Registers the cases of `counts()`, `depth()` and `health()`. */
export function statusCases(
  { run, accepted, takeOne, timeout }: StoreCaseKit,
  unreachable: StoreContractOptions['unreachable'],
): void {
  run('counts are exact', async ({ a, b }) => {
    await accepted(a, 5);
    const error = new Error('x');
    const one = await takeOne(a, 'a');
    await a.complete(one.jobId, one.token);
    const two = await takeOne(b, 'b');
    await b.fail(two.jobId, two.token, { outcome: 'failed', error, tries: 1, succeeded: [] });
    const three = await takeOne(a, 'a');
    await a.scheduleRetry(three.jobId, three.token, {
      outcome: 'retry',
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
    const down = await unreachable();
    try {
      const health = await Promise.race([down.health(), sleep(timeout / 2).then(() => undefined)]);
      check(health !== undefined, 'health() of a store that is down did not answer');
      same(health?.reachable, false, 'a store whose back end does not answer');
    } finally {
      await Promise.allSettled([down.close()]);
    }
  });
}
