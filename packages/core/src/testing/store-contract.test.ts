import { describe, expect, it } from 'vitest';
import { createMemoryStore, type AlertStore } from '@churn-risk/core/store';
import { storeContract } from '@churn-risk/core/testing';
import { broken, failingCases, wrap, type Bug } from './broken-stores.test-util.js';
import { BUGS } from './store-bugs.test-util.js';

// The contract passes the reference store, two instances on one back end in every case
// (for the in-memory store, one object per scope), fails each of eleven broken stores, and its
// deploy cases fail a store that loses the record of succeeded handlers or the retry itself.

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

describe('storeContract fails a store with any one of fourteen known bugs', () => {
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

describe('the deploy cases fail a store that loses what a deploy between two tries relies on', () => {
  const deploys = (name: string): boolean => name.startsWith('deploys: ');
  const unreachable = (): AlertStore => createMemoryStore({ available: () => false });
  const bugs: Record<string, Bug> = {
    // The next release runs again the handlers that had succeeded.
    'the retry forgets the record of succeeded handlers': (inner) => ({
      scheduleRetry: (id, token, verdict) =>
        inner.scheduleRetry(id, token, { ...verdict, succeeded: [] }),
    }),
    // The next release never runs the handler that failed.
    'the retry is dropped (the alert is completed instead)': (inner) => ({
      scheduleRetry: (id, token) => inner.complete(id, token),
    }),
  };
  for (const [name, bug] of Object.entries(bugs)) {
    it(
      name,
      async () => {
        const failed = await failingCases(broken(bug), unreachable, deploys);
        expect(failed).toHaveLength(5);
        expect(failed.every(deploys)).toBe(true);
      },
      60_000,
    );
  }
});

describe('the retry race cases fail a store whose retry checks, then writes', () => {
  const races = [
    'concurrent retryAll calls put each failed alert back once',
    'a retry racing a take neither resets nor duplicates a running alert',
    'retries go on while a worker fails each alert again at once',
  ];
  it('each of the three', async () => {
    const bug = BUGS['11. a retry checks, then writes']?.bug ?? (() => ({}));
    const failed = await failingCases(
      broken(bug),
      () => createMemoryStore({ available: () => false }),
      (name) => races.includes(name),
    );
    expect(failed.sort()).toEqual([...races].sort());
  }, 60_000);
});
