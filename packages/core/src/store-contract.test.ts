import { describe, expect, it } from 'vitest';
import { createMemoryStore, type AlertStore, type StoredAlert } from '@churn-risk/core';
import { storeContract, type ContractTestApi } from '@churn-risk/core/testing';

// SPEC 17: the contract passes the reference store, two instances on one back end in every case
// (for the in-memory store, one object per scope), and fails each of ten broken stores.

const scopes = new Map<string, AlertStore>();
const memory = (scope: string): AlertStore => {
  let store = scopes.get(scope);
  if (store === undefined) {
    store = createMemoryStore();
    scopes.set(scope, store);
  }
  return store;
};

storeContract(
  { describe, it },
  {
    name: 'memory',
    create: memory,
    unreachable: () => createMemoryStore({ available: () => false }),
  },
);

/** A store that delegates to the reference store, with one method replaced. */
type Bug = (inner: AlertStore) => Partial<AlertStore>;

/** `inner`, with the methods `bug` replaces. */
function wrap(inner: AlertStore, bug: Bug): AlertStore {
  const methods: AlertStore = {
    kind: 'broken',
    accept: (entry, options) => inner.accept(entry, options),
    take: (options) => inner.take(options),
    extend: (id, token, leaseMs, stalls) => inner.extend(id, token, leaseMs, stalls),
    complete: (id, token) => inner.complete(id, token),
    completeAndTake: (id, token, next) => inner.completeAndTake(id, token, next),
    scheduleRetry: (id, token, verdict) => inner.scheduleRetry(id, token, verdict),
    fail: (id, token, verdict) => inner.fail(id, token, verdict),
    reclaimExpired: () => inner.reclaimExpired?.() ?? Promise.resolve(0),
    failed: (options) => inner.failed(options),
    retry: (id) => inner.retry(id),
    retryAll: () => inner.retryAll(),
    counts: () => inner.counts(),
    health: () => inner.health(),
    depth: () => inner.depth(),
    close: () => inner.close(),
  };
  return { ...methods, ...bug(inner) };
}

/** A store per scope (shared by the scope's instances), each with `bug`. */
function broken(bug: Bug): (scope: string) => AlertStore {
  const stores = new Map<string, AlertStore>();
  return (scope) => {
    let store = stores.get(scope);
    if (store === undefined) {
      store = wrap(createMemoryStore(), bug);
      stores.set(scope, store);
    }
    return store;
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** The six bugs of SPEC 17 and four of SPEC 21, each alone. */
const BUGS: Record<string, { bug: Bug; caughtBy: string }> = {
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
      const handedOut = new Map<string, { taken: StoredAlert; token: string }>();
      const holder = (id: string): string => handedOut.get(id)?.token ?? '';
      const done = <T>(id: string, result: Promise<T>): Promise<T> => {
        handedOut.delete(id);
        return result;
      };
      return {
        async take(options) {
          const taken = await inner.take({ ...options, leaseMs: 3_600_000 });
          if (taken !== undefined) {
            handedOut.set(taken.id, { taken, token: options.token });
            return taken;
          }
          return handedOut.values().next().value?.taken;
        },
        extend: (id, _token, leaseMs) => inner.extend(id, holder(id), leaseMs),
        complete: (id) => done(id, inner.complete(id, holder(id))),
        async completeAndTake(id, _token, next) {
          const result = await done(id, inner.completeAndTake(id, holder(id), next));
          if (result.next !== undefined) {
            handedOut.set(result.next.id, { taken: result.next, token: next.token });
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
            (f) => f.id === id || f.alertId === id,
          );
          await inner.retry(id);
          if (entry !== undefined) kept.set(entry.id, entry.tries);
        },
        async take(options) {
          const taken = await inner.take(options);
          const tries = taken === undefined ? undefined : kept.get(taken.id);
          if (taken === undefined || tries === undefined) return taken;
          kept.delete(taken.id);
          return { ...taken, tries, succeeded: [] };
        },
      };
    },
  },
  '6. health() never asks the store': {
    caughtBy: 'health() reports a store that is down',
    bug: () => ({ health: () => Promise.resolve({ reachable: true }) }),
  },
  // SPEC 21: the steps the port gained, and core computing every transition.
  '7. completeAndTake ignores the token': {
    caughtBy: 'completeAndTake completes under the token and takes the next alert, exclusively',
    bug: (inner) => {
      const holders = new Map<string, string>();
      return {
        async take(options) {
          const taken = await inner.take(options);
          if (taken !== undefined) holders.set(taken.id, options.token);
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
};

/** Runs the contract against `create`, returning the names of the cases that failed. */
async function failingCases(
  create: (scope: string) => AlertStore,
  unreachable: () => AlertStore,
): Promise<string[]> {
  const cases: { name: string; fn: () => Promise<void> }[] = [];
  const api: ContractTestApi = {
    describe: (_name, fn) => {
      fn();
    },
    it: (name, fn) => {
      cases.push({ name, fn });
    },
  };
  storeContract(api, { name: 'broken', create, unreachable, timeoutMs: 4_000 });
  const failed: string[] = [];
  for (const { name, fn } of cases) {
    try {
      await fn();
    } catch {
      failed.push(name);
    }
  }
  return failed;
}

describe('storeContract fails a store with any one of the bugs of SPEC 17 and 21', () => {
  for (const [name, { bug, caughtBy }] of Object.entries(BUGS)) {
    it(
      name,
      async () => {
        const unreachable = (): AlertStore =>
          wrap(createMemoryStore({ available: () => false }), bug);
        const failed = await failingCases(broken(bug), unreachable);
        expect(failed).toContain(caughtBy);
      },
      120_000,
    );
  }

  it('and passes the same wrapper without a bug (the failures above are the bugs)', async () => {
    const failed = await failingCases(
      broken(() => ({})),
      () => createMemoryStore({ available: () => false }),
    );
    expect(failed).toEqual([]);
  }, 120_000);
});
