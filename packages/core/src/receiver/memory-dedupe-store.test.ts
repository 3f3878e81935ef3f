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
