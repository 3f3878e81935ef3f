// The machinery of the contract's own tests: a store that wraps the reference store with one bug,
// and a run of the whole contract that collects the names of the cases that failed.
import { createMemoryStore, type AlertStore } from '@churn-risk/core/store';
import { storeContract, type ContractTestApi } from '@churn-risk/core/testing';

/** A store that delegates to the reference store, with one method replaced. */
export type Bug = (inner: AlertStore) => Partial<AlertStore>;

/** `inner`, with the methods `bug` replaces. */
export function wrap(inner: AlertStore, bug: Bug): AlertStore {
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
    nextDueInMs: () => inner.nextDueInMs(),
    close: () => inner.close(),
  };
  return { ...methods, ...bug(inner) };
}

/** A store per scope (shared by the scope's instances), each with `bug`. */
export function broken(bug: Bug): (scope: string) => AlertStore {
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

/**
 * Runs the contract against `create` (only the cases whose name `only` accepts, default all),
 * returning the names of the cases that failed.
 */
export async function failingCases(
  create: (scope: string) => AlertStore,
  unreachable: () => AlertStore,
  only: (name: string) => boolean = () => true,
): Promise<string[]> {
  const cases: { name: string; fn: () => Promise<void> }[] = [];
  const api: ContractTestApi = {
    describe: (_name, fn) => {
      fn();
    },
    it: (name, fn) => {
      if (only(name)) cases.push({ name, fn });
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
