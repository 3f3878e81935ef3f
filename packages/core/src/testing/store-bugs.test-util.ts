// The fourteen broken stores the contract must fail: six bugs of the storage port, four of its
// fenced, core-computed writes, one of retries that race and three of the order per user, each
// with the case that catches it.
import type { AlertRecord } from '@churn-risk/core/store';
import type { Bug } from './broken-stores.test-util.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** The fourteen bugs, each alone. */
export const BUGS: Record<string, { bug: Bug; caughtBy: string }> = {
  '1. accept checks, then inserts': {
    caughtBy: '20 parallel accepts of one alert give exactly one "accepted"',
    bug: (inner) => {
      const seen = new Set<string>();
      let copies = 0;
      return {
        async accept(entry, options) {
          if (seen.has(entry.id)) return 'duplicate';
          await tick(); // the check and the insert are two steps
          seen.add(entry.id);
          return inner.accept({ ...entry, id: `${entry.id}#${String(++copies)}` }, options);
        },
      };
    },
  },
  '2. no lock or lease': {
    caughtBy: 'take is exclusive',
    bug: (inner) => {
      // Whoever asks gets an alert, and any token writes: the first taker's lease is used for all.
      const handedOut = new Map<string, { taken: AlertRecord<'taken'>; token: string }>();
      const holder = (id: string): string => handedOut.get(id)?.token ?? '';
      const done = <T>(id: string, result: Promise<T>): Promise<T> => {
        handedOut.delete(id);
        return result;
      };
      return {
        async take(options) {
          const taken = await inner.take({ ...options, leaseMs: 3_600_000 });
          if (taken !== undefined) {
            handedOut.set(taken.jobId, { taken, token: options.token });
            return taken;
          }
          return handedOut.values().next().value?.taken;
        },
        extend: (id, _token, leaseMs) => inner.extend(id, holder(id), leaseMs),
        complete: (id) => done(id, inner.complete(id, holder(id))),
        async completeAndTake(id, _token, next) {
          const result = await done(id, inner.completeAndTake(id, holder(id), next));
          if (result.next !== undefined) {
            handedOut.set(result.next.jobId, { taken: result.next, token: next.token });
          }
          return result;
        },
        scheduleRetry: (id, _token, verdict) =>
          done(id, inner.scheduleRetry(id, holder(id), verdict)),
        fail: (id, _token, verdict) => done(id, inner.fail(id, holder(id), verdict)),
      };
    },
  },
  '3. delayMs is ignored': {
    caughtBy: 'nothing is taken before its delay',
    bug: (inner) => ({
      scheduleRetry: (id, token, verdict) =>
        inner.scheduleRetry(id, token, { ...verdict, delayMs: 0 }),
    }),
  },
  '4. the succeeded record is dropped on failure': {
    caughtBy: 'the succeeded record is kept across a failure and a retry; retry resets tries',
    bug: (inner) => ({
      fail: (id, token, verdict) => inner.fail(id, token, { ...verdict, succeeded: [] }),
    }),
  },
  '5. retry(id) wipes the record and keeps the try count': {
    caughtBy: 'retry(id) resets tries and stalls, by job id or alert identity',
    bug: (inner) => {
      const kept = new Map<string, number>();
      return {
        async retry(id) {
          const entry = (await inner.failed({ limit: 1000 })).find(
            (f) => f.jobId === id || f.id === id,
          );
          await inner.retry(id);
          if (entry !== undefined) kept.set(entry.jobId, entry.tries);
        },
        async take(options) {
          const taken = await inner.take(options);
          const tries = taken === undefined ? undefined : kept.get(taken.jobId);
          if (taken === undefined || tries === undefined) return taken;
          kept.delete(taken.jobId);
          return { ...taken, tries, succeeded: [] };
        },
      };
    },
  },
  '6. health() never asks the store': {
    caughtBy: 'health() reports a store that is down',
    bug: () => ({ health: () => Promise.resolve({ reachable: true }) }),
  },
  // The completion that takes the next alert, and core computing every transition.
  '7. completeAndTake ignores the token': {
    caughtBy: 'completeAndTake completes under the token and takes the next alert, exclusively',
    bug: (inner) => {
      const holders = new Map<string, string>();
      return {
        async take(options) {
          const taken = await inner.take(options);
          if (taken !== undefined) holders.set(taken.jobId, options.token);
          return taken;
        },
        completeAndTake: (id, _token, next) =>
          inner.completeAndTake(id, holders.get(id) ?? '', next),
      };
    },
  },
  '8. the store counts tries itself': {
    caughtBy: 'nothing is taken before its delay',
    bug: (inner) => {
      const counted = new Map<string, number>();
      return {
        scheduleRetry(id, token, verdict) {
          const tries = (counted.get(id) ?? 0) + 1;
          counted.set(id, tries);
          return inner.scheduleRetry(id, token, { ...verdict, tries });
        },
      };
    },
  },
  '9. the stall count core writes is dropped': {
    caughtBy: 'an expired lease is taken over, marked lapsed; the stall count core writes is kept',
    bug: (inner) => ({ extend: (id, token, leaseMs) => inner.extend(id, token, leaseMs) }),
  },
  '10. a reclaim soon after the last one is skipped': {
    caughtBy: 'reclaimExpired does the whole job at every call (stores that reclaim on demand)',
    bug: (inner) => {
      let last = 0;
      return {
        reclaimExpired() {
          if (Date.now() - last < 1_000) return Promise.resolve(0);
          last = Date.now();
          return inner.reclaimExpired?.() ?? Promise.resolve(0);
        },
      };
    },
  },
  // Retries that race: one atomic step per alert.
  '11. a retry checks, then writes': {
    caughtBy: 'concurrent retryAll calls put each failed alert back once',
    bug: (inner) => {
      const retry = async (id: string): Promise<void> => {
        const failed = await inner.failed({ limit: 1000 });
        if (!failed.some((f) => f.jobId === id || f.id === id)) {
          throw new TypeError(`No failed alert with id "${id}".`);
        }
        await tick(); // the check and the write are two steps
        await inner.retry(id); // rejects once another call put the alert back meanwhile
      };
      return {
        retry,
        async retryAll() {
          const ids = (await inner.failed({ limit: 1000 })).map((f) => f.jobId);
          for (const id of ids) await retry(id); // one alert retried elsewhere stops them all
          return ids.length;
        },
      };
    },
  },
  '12. a take in order per user ignores the hold': {
    caughtBy: 'in order per user, two processes never hold two alerts of one user',
    // The order is left to the taker: every due alert is handed out.
    bug: (inner) => ({
      take: ({ perUser: _perUser, ...options }) => inner.take(options),
    }),
  },
  '13. a take in order per user takes the first accepted, not the oldest': {
    caughtBy: "a user's oldest waiting alert starts first, whatever the order of acceptance",
    // The store forgets each alert's time: the line is the order of acceptance.
    bug: (inner) => ({
      accept: (entry, options) =>
        inner.accept(
          entry,
          options.order === undefined
            ? options
            : { ...options, order: { ...options.order, at: 0 } },
        ),
    }),
  },
  '14. the newest time of a user is not kept': {
    caughtBy: 'the newest time accepted for a user is seen by every process',
    // Each taken alert says it is its user's newest.
    bug: (inner) => ({
      async take(options) {
        const taken = await inner.take(options);
        return taken === undefined
          ? undefined
          : { ...taken, newest: Date.parse(taken.alert.triggeredAt) };
      },
    }),
  },
};
