import { describe, expect, it } from 'vitest';
import { createMemoryStore, type AlertStore } from '@churn-risk/core/store';
import { storeContract } from '@churn-risk/core/testing';
import { broken, failingCases, wrap } from './broken-stores.test-util.js';
import { BUGS } from './store-bugs.test-util.js';

// The contract passes the reference store, two instances on one back end in every case
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

describe('storeContract fails a store with any one of ten known bugs', () => {
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
