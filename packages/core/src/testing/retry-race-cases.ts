// Retries that race: several retry-alls at once, and retries of an alert racing the take of a
// worker. A retry is one atomic step per alert: each failed alert is put back once, its counters
// reset only while it is still failed, and a retry-all goes on past an alert that is no longer
// failed (retried by another call, or taken) without counting it.
import type { AlertStore } from '../processing/durable/alert-store.js';
import type { AlertRecord } from '../queue-port/alert-queue.js';
import type { StoreCaseKit } from './store-fixture.js';
import { ContractError, check, same, sleep, token } from './support.js';

/** Accepts `count` alerts into `store`, takes each and fails it with 3 tries and 2 stalls. */
async function failedAlerts(
  kit: StoreCaseKit,
  store: AlertStore,
  count: number,
): Promise<AlertRecord<'accepted'>[]> {
  const alerts = await kit.accepted(store, count);
  for (let i = 0; i < count; i++) {
    const taken = await kit.takeOne(store, 'failer');
    same(await store.extend(taken.jobId, taken.token, kit.leaseMs, 2), true, 'extend with stalls');
    same(
      await store.fail(taken.jobId, taken.token, {
        outcome: 'failed',
        error: new Error('down'),
        tries: 3,
        succeeded: ['h0'],
      }),
      true,
      'fail',
    );
  }
  same((await store.counts()).failed, count, 'failed alerts before the retries');
  return alerts;
}

/** The settled calls' values; a `ContractError` naming the first that rejected. */
function resolved<T>(results: PromiseSettledResult<T>[], what: string): T[] {
  return results.map((result, i) => {
    if (result.status === 'fulfilled') return result.value;
    const reason: unknown = result.reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    throw new ContractError(`${what} #${String(i + 1)} rejected: ${message}`);
  });
}

/** Registers the cases of concurrent retry-alls and of a retry against a worker's take. */
export function retryRaceCases(kit: StoreCaseKit): void {
  const { run, timeout } = kit;

  run('concurrent retryAll calls put each failed alert back once', async ({ a, b }) => {
    const count = 24;
    await failedAlerts(kit, a, count);
    const calls = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).retryAll());
    const counts = resolved(await Promise.allSettled(calls), 'retryAll()');
    same(
      counts.reduce((sum, n) => sum + n, 0),
      count,
      `the sum of the retryAll counts (${counts.join(', ')})`,
    );
    const after = await b.counts();
    same([after.failed, after.waiting, after.active], [0, count, 0], 'failed, waiting, active');
    const taken = new Set<string>();
    for (let i = 0; i < count; i++) {
      const alert = await kit.takeOne(i % 2 === 0 ? a : b, 'taker');
      check(!taken.has(alert.jobId), `alert ${alert.jobId} was taken twice`);
      taken.add(alert.jobId);
      same(
        [alert.tries, alert.stalls, alert.lapsed, alert.succeeded],
        [0, 0, false, ['h0']],
        'tries, stalls, lapsed and record after the retries',
      );
      same(await (i % 2 === 0 ? a : b).complete(alert.jobId, alert.token), true, 'complete');
    }
    same(await a.take({ token: token('a'), leaseMs: kit.leaseMs, wait: false }), undefined, 'more');
  });

  run('a retry racing a take neither resets nor duplicates a running alert', async ({ a, b }) => {
    const count = 12;
    const alerts = await failedAlerts(kit, a, count);
    const failed = await a.failed({ limit: count });
    same(failed.length, count, 'failed()');
    // A worker on each instance: the first take of an alert must see its counters reset; it
    // writes a retry with 1 try at once, and the second take must see that try (a retry that
    // lands late would reset it); then the alert completes.
    const takes = new Map<string, number>();
    const state = { stop: false, problem: undefined as string | undefined };
    const worker = async (store: AlertStore, who: string): Promise<void> => {
      while (!state.stop) {
        const t = token(who);
        const alert = await store.take({ token: t, leaseMs: 60_000, wait: false });
        if (alert === undefined) {
          await sleep(1);
          continue;
        }
        const seen = (takes.get(alert.jobId) ?? 0) + 1;
        takes.set(alert.jobId, seen);
        if (seen === 1) {
          if (alert.tries !== 0 || alert.stalls !== 0 || alert.lapsed) {
            state.problem ??= `first take after the retry: tries ${String(alert.tries)}, stalls ${String(alert.stalls)}, lapsed ${String(alert.lapsed)}`;
          }
          const verdict = {
            outcome: 'retry',
            delayMs: 0,
            tries: 1,
            succeeded: ['h0', 'h1'],
            error: new Error('once more'),
          } as const;
          if (!(await store.scheduleRetry(alert.jobId, t, verdict))) {
            state.problem ??= 'a running alert lost its lease to a retry (scheduleRetry refused)';
          }
        } else if (seen === 2) {
          if (alert.tries !== 1 || alert.succeeded.join() !== 'h0,h1') {
            state.problem ??= `second take: tries ${String(alert.tries)}, record ${alert.succeeded.join()} (a retry reset a running alert)`;
          }
          if (!(await store.complete(alert.jobId, t))) {
            state.problem ??= 'a running alert lost its lease to a retry (complete refused)';
          }
        } else {
          state.problem ??= `alert ${alert.jobId} was taken ${String(seen)} times`;
        }
      }
    };
    const workers = [worker(a, 'wa'), worker(b, 'wb')];
    let perAlert: PromiseSettledResult<void>[];
    let alls: number[];
    try {
      // Every alert is retried three times at once (by job id on both instances, by identity),
      // while two retry-alls run.
      const singles = failed.flatMap((f) => [b.retry(f.jobId), a.retry(f.jobId), b.retry(f.id)]);
      const all = Promise.allSettled([a.retryAll(), b.retryAll()]);
      perAlert = await Promise.allSettled(singles);
      alls = resolved(await all, 'retryAll()');
      const deadline = Date.now() + timeout / 2;
      while ([...takes.values()].filter((n) => n >= 2).length < count && !state.problem) {
        if (Date.now() > deadline) throw new ContractError('the retried alerts did not all run');
        await sleep(5);
      }
      await sleep(50); // a take of a third copy, if any
    } finally {
      state.stop = true;
      await Promise.all(workers);
    }
    if (state.problem !== undefined) throw new ContractError(state.problem);
    for (const result of perAlert) {
      if (result.status === 'rejected') {
        check(
          result.reason instanceof TypeError,
          'a retry of an alert that is no longer failed rejects with a TypeError',
        );
      }
    }
    const single = perAlert.filter((result) => result.status === 'fulfilled').length;
    same(
      single + alls.reduce((sum, n) => sum + n, 0),
      count,
      'alerts put back (retry calls + retryAll counts)',
    );
    same(takes.size, alerts.length, 'alerts taken');
    const after = await a.counts();
    same([after.failed, after.waiting, after.active], [0, 0, 0], 'failed, waiting, active');
  });

  run('retries go on while a worker fails each alert again at once', async ({ a, b }) => {
    const count = 40;
    await failedAlerts(kit, a, count);
    // Workers fail every alert again as soon as they take it (with stalls 2 and 1 try, so that a
    // reset that missed is seen at the next take), while retry-alls and retries run in rounds.
    const state = { stop: false, problem: undefined as string | undefined, takes: 0 };
    const worker = async (store: AlertStore, who: string): Promise<void> => {
      while (!state.stop) {
        const t = token(who);
        const alert = await store.take({ token: t, leaseMs: 60_000, wait: false });
        if (alert === undefined) {
          await sleep(1);
          continue;
        }
        state.takes++;
        if (alert.tries !== 0 || alert.stalls !== 0) {
          state.problem ??= `a take after a retry: tries ${String(alert.tries)}, stalls ${String(alert.stalls)} (a reset missed)`;
        }
        await store.extend(alert.jobId, t, 60_000, 2);
        const verdict = {
          outcome: 'failed',
          tries: 1,
          succeeded: ['h0'],
          error: new Error('down again'),
        } as const;
        if (!(await store.fail(alert.jobId, t, verdict))) {
          state.problem ??= 'a running alert lost its lease to a retry (fail refused)';
        }
      }
    };
    const workers = [worker(a, 'wa'), worker(b, 'wb')];
    let retried = 0;
    try {
      const allFailed = async (): Promise<void> => {
        const deadline = Date.now() + timeout / 8;
        while ((await a.counts()).failed < count && state.problem === undefined) {
          if (Date.now() > deadline)
            throw new ContractError('the retried alerts did not fail again');
          await sleep(2);
        }
      };
      for (let round = 0; round < 4; round++) {
        // Every call resolves, and counts only what it put back: each alert once per call at
        // most (a call that began after another put an alert back and it failed again may put
        // back that new failure), and one take per alert put back (checked at the end).
        await allFailed();
        const alls = resolved(
          await Promise.allSettled(
            Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).retryAll()),
          ),
          'retryAll()',
        );
        for (const n of alls) {
          check(n <= count, `retryAll() counted ${String(n)} of ${String(count)} alerts`);
        }
        retried += alls.reduce((sum, n) => sum + n, 0);
        await allFailed();
        const ids = (await b.failed({ limit: count })).map((f) => f.jobId);
        const singles = await Promise.allSettled(ids.flatMap((id) => [a.retry(id), b.retry(id)]));
        for (const result of singles) {
          if (result.status === 'rejected') {
            const reason: unknown = result.reason;
            check(
              reason instanceof TypeError,
              `a retry of an alert no longer failed rejects with a TypeError, not: ${reason instanceof Error ? reason.message : String(reason)}`,
            );
          } else retried++;
        }
      }
      await allFailed();
    } finally {
      state.stop = true;
      await Promise.all(workers);
    }
    if (state.problem !== undefined) throw new ContractError(state.problem);
    same(state.takes, retried, 'takes (one per alert put back)');
    const after = await a.counts();
    same([after.failed, after.waiting, after.active], [count, 0, 0], 'failed, waiting, active');
  });
}
