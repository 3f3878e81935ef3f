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
