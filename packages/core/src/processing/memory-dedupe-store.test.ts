import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryDedupeStore } from './memory-dedupe-store.js';

describe('createMemoryDedupeStore', () => {
  it('lets the first claim of a key win until its time to live has passed', () => {
    let now = 1_000;
    const store = createMemoryDedupeStore({ now: () => now });
    expect(store.claim('a', 100)).toBe(true);
    expect(store.claim('a', 100)).toBe(false);
    expect(store.claim('b', 100)).toBe(true);
    now = 1_099;
    expect(store.claim('a', 100)).toBe(false);
    now = 1_100;
    expect(store.claim('a', 100)).toBe(true); // expired: claimed afresh
    expect(store.claim('a', 100)).toBe(false);
  });

  it('forgets a released key', () => {
    const store = createMemoryDedupeStore();
    expect(store.claim('a', 60_000)).toBe(true);
    store.release('a');
    expect(store.claim('a', 60_000)).toBe(true);
    store.release('never-claimed');
    expect(store.size).toBe(1);
  });

  it('keeps at most maxEntries keys, forgetting the least recently used first', () => {
    const store = createMemoryDedupeStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) expect(store.claim(key, 60_000)).toBe(true);
    expect(store.claim('a', 60_000)).toBe(false); // seen again: now the most recent
    expect(store.claim('d', 60_000)).toBe(true); // evicts b
    expect(store.size).toBe(3);
    expect(store.claim('a', 60_000)).toBe(false);
    expect(store.claim('c', 60_000)).toBe(false);
    expect(store.claim('b', 60_000)).toBe(true); // b had been forgotten
  });

  it('prunes expired keys as new ones arrive', () => {
    let now = 0;
    const store = createMemoryDedupeStore({ now: () => now });
    for (let i = 0; i < 100; i++) store.claim(`k${i}`, 10);
    now = 10;
    store.claim('fresh', 10);
    expect(store.size).toBe(1);
  });

  it('refuses a maxEntries below 1', () => {
    expect(() => createMemoryDedupeStore({ maxEntries: 0 })).toThrow(TypeError);
  });
});

describe('createMemoryDedupeStore at capacity', () => {
  it('keeps exactly the most recent maxEntries keys through many evictions', () => {
    const max = 1_000;
    const store = createMemoryDedupeStore({ maxEntries: max });
    for (let i = 0; i < 10 * max; i++) expect(store.claim(`k${i}`, 60_000)).toBe(true);
    expect(store.size).toBe(max);
    // The newest 1,000 are still held, the one before them was forgotten.
    for (let i = 9 * max; i < 10 * max; i++) expect(store.claim(`k${i}`, 60_000)).toBe(false);
    expect(store.claim(`k${9 * max - 1}`, 60_000)).toBe(true);
  });

  it('keeps the list consistent when the oldest, newest and middle keys are released', () => {
    const store = createMemoryDedupeStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) store.claim(key, 60_000);
    store.release('a'); // oldest
    store.release('c'); // newest
    store.claim('d', 60_000);
    store.claim('e', 60_000);
    store.release('d'); // middle
    expect(store.size).toBe(2);
    store.claim('f', 60_000);
    store.claim('g', 60_000); // evicts b, the least recently used
    expect(store.size).toBe(3);
    expect(store.claim('b', 60_000)).toBe(true);
    expect(store.claim('f', 60_000)).toBe(false);
    expect(store.claim('g', 60_000)).toBe(false);
  });

  it('claims an expired key afresh and stops pruning at the first live key', () => {
    let now = 0;
    const store = createMemoryDedupeStore({ now: () => now });
    store.claim('short', 10);
    store.claim('long', 1_000);
    now = 10;
    expect(store.claim('short', 10)).toBe(true); // expired: claimed afresh, not a duplicate
    expect(store.size).toBe(2);
    expect(store.claim('long', 1_000)).toBe(false);
  });
});

describe('createMemoryDedupeStore under churn', () => {
  it('evicts in recency order at 10x capacity, with keys seen again kept', () => {
    const max = 500;
    let now = 0;
    const store = createMemoryDedupeStore({ maxEntries: max, now: () => now });
    for (let i = 0; i < 10 * max; i++) {
      now++;
      expect(store.claim(`user_${i}:2026-11-23T10:00:00.000Z`, 1_000_000)).toBe(true);
      // Keep user_0 the most recently used: it must survive every eviction.
      expect(store.claim('user_0:2026-11-23T10:00:00.000Z', 1_000_000)).toBe(false);
    }
    expect(store.size).toBe(max);
    expect(store.claim('user_0:2026-11-23T10:00:00.000Z', 1_000_000)).toBe(false);
    // user_0 plus the newest max - 1 others are held; the one before them was forgotten.
    for (let i = 10 * max - (max - 1); i < 10 * max; i++) {
      expect(store.claim(`user_${i}:2026-11-23T10:00:00.000Z`, 1_000_000)).toBe(false);
    }
    expect(store.claim(`user_${10 * max - max}:2026-11-23T10:00:00.000Z`, 1_000_000)).toBe(true);
    expect(store.size).toBe(max);
  });

  it('releases the oldest, the newest and one in the middle at capacity, then refills', () => {
    const max = 100;
    const store = createMemoryDedupeStore({ maxEntries: max });
    for (let i = 0; i < max; i++) store.claim(`k${i}`, 60_000);
    store.release('k0'); // oldest
    store.release(`k${max - 1}`); // newest
    store.release('k50'); // middle
    expect(store.size).toBe(max - 3);
    for (const key of ['k0', `k${max - 1}`, 'k50']) expect(store.claim(key, 60_000)).toBe(true);
    expect(store.size).toBe(max);
    expect(store.claim('new', 60_000)).toBe(true); // evicts k1, now the least recently used
    expect(store.claim('k1', 60_000)).toBe(true); // evicts k2
    expect(store.claim('k3', 60_000)).toBe(false);
    expect(store.claim('k50', 60_000)).toBe(false);
    expect(store.size).toBe(max);
  });

  it('forgets every expired key and takes new ones in their place', () => {
    let now = 0;
    const store = createMemoryDedupeStore({ maxEntries: 1_000, now: () => now });
    for (let i = 0; i < 1_000; i++) store.claim(`old${i}`, 100);
    now = 100;
    for (let i = 0; i < 1_000; i++) expect(store.claim(`new${i}`, 100)).toBe(true);
    expect(store.size).toBe(1_000);
    for (let i = 0; i < 1_000; i++) expect(store.claim(`new${i}`, 100)).toBe(false);
    now = 200;
    for (let i = 0; i < 1_000; i++) expect(store.claim(`old${i}`, 100)).toBe(true);
  });
});

/**
 * The reference model: an exact LRU with a time to live, written the obvious way (a Map in
 * recency order), pruning as the store documents (expired keys from the least recently used end
 * up to the first live one, when a key is claimed afresh).
 */
class ReferenceLru {
  readonly #expiry = new Map<string, number>();
  constructor(readonly maxEntries: number) {}

  claim(key: string, ttlMs: number, now: number): boolean {
    const expiry = this.#expiry.get(key);
    if (expiry !== undefined) {
      this.#expiry.delete(key);
      if (expiry > now) {
        this.#expiry.set(key, expiry);
        return false;
      }
    }
    for (const [oldest, oldestExpiry] of this.#expiry) {
      if (oldestExpiry > now) break;
      this.#expiry.delete(oldest);
    }
    if (this.#expiry.size >= this.maxEntries) {
      this.#expiry.delete(this.#expiry.keys().next().value as string);
    }
    this.#expiry.set(key, now + ttlMs);
    return true;
  }

  release(key: string): void {
    this.#expiry.delete(key);
  }

  get size(): number {
    return this.#expiry.size;
  }
}

type Operation =
  | { kind: 'claim'; key: string; ttlMs: number }
  | { kind: 'release'; key: string }
  | { kind: 'tick'; ms: number };

/** Alert identities of the real shape, from a small pool so that keys repeat. */
const keyArbitrary = fc
  .tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 3 }))
  .map(([user, day]) => `user_${user}:2026-11-2${day}T10:00:00.000Z`);

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      key: keyArbitrary,
      ttlMs: fc.integer({ min: 1, max: 50 }),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('release' as const), key: keyArbitrary }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      ms: fc.integer({ min: 0, max: 20 }),
    }),
    weight: 2,
  },
);

describe('createMemoryDedupeStore against a reference LRU', () => {
  it('answers every claim and holds as many keys as an exact LRU with a time to live', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(operationArbitrary, { maxLength: 400 }),
        (maxEntries, operations) => {
          let now = 1_000;
          const store = createMemoryDedupeStore({ maxEntries, now: () => now });
          const model = new ReferenceLru(maxEntries);
          for (const operation of operations) {
            if (operation.kind === 'tick') now += operation.ms;
            else if (operation.kind === 'release') {
              store.release(operation.key);
              model.release(operation.key);
            } else {
              expect(store.claim(operation.key, operation.ttlMs)).toBe(
                model.claim(operation.key, operation.ttlMs, now),
              );
            }
            expect(store.size).toBe(model.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
  it('agrees with the reference while the store grows past its first 1,024 slots', () => {
    const key = fc
      .integer({ min: 0, max: 4_000 })
      .map((user) => `user_${user}:2026-11-23T10:00:00.000Z`);
    const operation: fc.Arbitrary<Operation> = fc.oneof(
      {
        arbitrary: fc.record({ kind: fc.constant('claim' as const), key, ttlMs: fc.constant(500) }),
        weight: 8,
      },
      { arbitrary: fc.record({ kind: fc.constant('release' as const), key }), weight: 1 },
      {
        arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constant(1) }),
        weight: 1,
      },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1_025, max: 3_000 }),
        fc.array(operation, { minLength: 4_000, maxLength: 6_000 }),
        (maxEntries, operations) => {
          let now = 0;
          const store = createMemoryDedupeStore({ maxEntries, now: () => now });
          const model = new ReferenceLru(maxEntries);
          for (const op of operations) {
            if (op.kind === 'tick') now += op.ms;
            else if (op.kind === 'release') {
              store.release(op.key);
              model.release(op.key);
            } else expect(store.claim(op.key, op.ttlMs)).toBe(model.claim(op.key, op.ttlMs, now));
          }
          expect(store.size).toBe(model.size);
        },
      ),
      { numRuns: 5 },
    );
  });
});
