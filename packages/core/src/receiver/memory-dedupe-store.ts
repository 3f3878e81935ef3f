import type { DedupeStore } from './types.js';

/** Options of `createMemoryDedupeStore`. */
export interface MemoryDedupeStoreOptions {
  /** Most keys kept; beyond it the least recently used key is forgotten. Default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds, like `Date.now`. */
  now?: () => number;
}

/** The in-memory store, with its size for tests and diagnostics. */
export interface MemoryDedupeStore extends DedupeStore {
  claim(key: string, ttlMs: number): boolean;
  release(key: string): void;
  /** Keys currently held (expired ones may still be counted until they are pruned). */
  readonly size: number;
}

const NONE = -1;
const INITIAL_SLOTS = 1024;

/**
 * An in-memory LRU of alert identities, the receiver's default `DedupeStore`. It is per process:
 * several instances behind a load balancer need a shared store instead. Every operation is O(1).
 *
 * @example
 * const receiver = createReceiver({ secret, dedupe: { store: createMemoryDedupeStore({ maxEntries: 1000 }) } });
 */
export function createMemoryDedupeStore(options: MemoryDedupeStoreOptions = {}): MemoryDedupeStore {
  const maxEntries = options.maxEntries ?? 100_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new TypeError('maxEntries must be an integer of at least 1.');
  }
  const now = options.now ?? Date.now;
  // Layout, chosen for the garbage collector as much as for speed: a key is held in a slot, and
  // the recency list (doubly linked, oldest first) and the expiries live in typed arrays indexed by
  // slot. A store holding 100,000 identities then keeps 100,000 strings and a few arrays alive, not
  // 100,000 more objects for every collection to trace. (A Map alone, with its insertion order as
  // recency, is worse: reading its oldest key after many deletions walks over the deleted slots
  // until V8 compacts the table, O(n) per claim at steady state.)
  const slotOf = new Map<string, number>();
  let capacity = Math.min(maxEntries, INITIAL_SLOTS);
  let keys: (string | undefined)[] = new Array<string | undefined>(capacity).fill(undefined);
  let expiries = new Float64Array(capacity);
  let older = new Int32Array(capacity);
  let newer = new Int32Array(capacity);
  let oldest = NONE;
  let newest = NONE;
  let used = 0; // slots ever handed out; below it, free slots are chained through `newer`
  let free = NONE;

  function grow(): void {
    const next = Math.min(maxEntries, capacity * 2);
    keys = keys.concat(new Array<string | undefined>(next - capacity).fill(undefined));
    const grownExpiries = new Float64Array(next);
    grownExpiries.set(expiries);
    expiries = grownExpiries;
    const grownOlder = new Int32Array(next);
    grownOlder.set(older);
    older = grownOlder;
    const grownNewer = new Int32Array(next);
    grownNewer.set(newer);
    newer = grownNewer;
    capacity = next;
  }

  function unlink(slot: number): void {
    const before = older[slot] as number;
    const after = newer[slot] as number;
    if (before === NONE) oldest = after;
    else newer[before] = after;
    if (after === NONE) newest = before;
    else older[after] = before;
  }

  function append(slot: number): void {
    older[slot] = newest;
    newer[slot] = NONE;
    if (newest === NONE) oldest = slot;
    else newer[newest] = slot;
    newest = slot;
  }

  function remove(slot: number): void {
    unlink(slot);
    slotOf.delete(keys[slot] as string);
    keys[slot] = undefined;
    newer[slot] = free;
    free = slot;
  }

  function takeSlot(): number {
    if (free !== NONE) {
      const slot = free;
      free = newer[slot] as number;
      return slot;
    }
    if (used === capacity) grow();
    return used++;
  }

  return {
    claim(key, ttlMs) {
      const time = now();
      const existing = slotOf.get(key);
      if (existing !== undefined) {
        if ((expiries[existing] as number) > time) {
          // Seen again: now the most recently used, with the same expiry.
          unlink(existing);
          append(existing);
          return false;
        }
        remove(existing);
      }
      // Forget expired keys from the least recently used end, up to the first live one; then make
      // room by forgetting the least recently used.
      while (oldest !== NONE && (expiries[oldest] as number) <= time) remove(oldest);
      if (slotOf.size >= maxEntries) remove(oldest);
      const slot = takeSlot();
      keys[slot] = key;
      expiries[slot] = time + ttlMs;
      slotOf.set(key, slot);
      append(slot);
      return true;
    },
    release(key) {
      const slot = slotOf.get(key);
      if (slot !== undefined) remove(slot);
    },
    get size() {
      return slotOf.size;
    },
  };
}
