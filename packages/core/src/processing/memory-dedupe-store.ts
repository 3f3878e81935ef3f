import { refuseUnknownOptions } from '../options/known-options.js';
import { integerOption } from '../options/integer-option.js';
import type { DedupeStore } from '../receiver/types.js';

/** How many identities the store holds by default (also `MEMORY_QUEUE_DEFAULTS.dedupeMaxEntries`). */
export const DEFAULT_DEDUPE_MAX_ENTRIES = 100_000;

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
 * An in-memory LRU of alert identities, the receiver's default `DedupeStore`: `claim(key, ttlMs)`
 * is true the first time within the time to live and false after, `release(key)` forgets the key,
 * and at most `maxEntries` keys are held, the least recently used (claimed or seen again)
 * forgotten first. It is per process: several instances behind a load balancer need a shared store
 * instead. Every operation is O(1) and allocates nothing.
 *
 * A key is kept as a 64-bit hash of its text (two independent 32-bit hashes), not as the string:
 * the store holds no object per key for the garbage collector to trace. The trade-off: two
 * different keys with the same 64-bit hash are taken for one, so the second would be answered as a
 * duplicate and not processed. With `n` keys held the chance of that is about `n / 2^64` per claim
 * (~5e-15 at the default 100,000 keys). The hash is not a cryptographic one; the keys are the
 * identities of signed deliveries, which a third party cannot choose.
 *
 * @example
 * const receiver = createReceiver({ secret, dedupe: { store: createMemoryDedupeStore({ maxEntries: 1000 }) } });
 */
export function createMemoryDedupeStore(options: MemoryDedupeStoreOptions = {}): MemoryDedupeStore {
  refuseUnknownOptions('createMemoryDedupeStore', options, ['maxEntries', 'now']);
  const maxEntries = integerOption(
    'maxEntries',
    options.maxEntries ?? DEFAULT_DEDUPE_MAX_ENTRIES,
    1,
  );
  const now = options.now ?? Date.now;
  // Layout, chosen for the garbage collector as much as for speed: a key is held in a slot, whose
  // hash, expiry and place in the recency list (doubly linked, oldest first) live in typed arrays
  // indexed by slot. `table` is an open-addressing hash table (linear probing, at most half full,
  // deletion by backward shift, so no tombstones) of `slot + 1`, 0 for an empty bucket. A store
  // holding 100,000 identities is a few typed arrays, with no string or object per identity (a Map
  // of strings kept 100,000 strings in old space, one replaced per delivery at capacity).
  let capacity = Math.min(maxEntries, INITIAL_SLOTS);
  let hashA = new Int32Array(capacity);
  let hashB = new Int32Array(capacity);
  let expiries = new Float64Array(capacity);
  let older = new Int32Array(capacity);
  let newer = new Int32Array(capacity);
  let table = new Int32Array(bucketsFor(capacity));
  let mask = table.length - 1;
  let oldest = NONE;
  let newest = NONE;
  let count = 0;
  let used = 0; // slots ever handed out; below it, free slots are chained through `newer`
  let free = NONE;
  // The hash of the key at hand, set by `hash` (two numbers, so nothing is allocated to return).
  let a = 0;
  let b = 0;

  /** Two 32-bit hashes of `key` in one pass: FNV-1a, and a MurmurHash3-style one, seeded. */
  function hash(key: string): void {
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      let k = Math.imul(c, 0xcc9e2d51);
      k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
      h2 ^= k;
      h2 = (Math.imul((h2 << 13) | (h2 >>> 19), 5) + 0xe6546b64) | 0;
    }
    a = mix(h1 ^ key.length);
    b = mix(h2 ^ key.length);
  }

  /** The bucket holding the hash at hand, or the empty bucket where it would go, as `~bucket`. */
  function find(): number {
    for (let bucket = a & mask; ; bucket = (bucket + 1) & mask) {
      const entry = table[bucket] as number;
      if (entry === 0) return ~bucket;
      const slot = entry - 1;
      if (hashA[slot] === a && hashB[slot] === b) return bucket;
    }
  }

  /** Empties `bucket`, moving later entries of its probe run back so that no lookup stops early. */
  function clearBucket(bucket: number): void {
    let hole = bucket;
    for (let next = (hole + 1) & mask; ; next = (next + 1) & mask) {
      const entry = table[next] as number;
      if (entry === 0) break;
      const home = (hashA[entry - 1] as number) & mask;
      // The entry may fill the hole unless its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (!stays) {
        table[hole] = entry;
        hole = next;
      }
    }
    table[hole] = 0;
  }

  function grow(): void {
    const next = Math.min(maxEntries, capacity * 2);
    hashA = grown(hashA, new Int32Array(next));
    hashB = grown(hashB, new Int32Array(next));
    expiries = grown(expiries, new Float64Array(next));
    older = grown(older, new Int32Array(next));
    newer = grown(newer, new Int32Array(next));
    capacity = next;
    const buckets = bucketsFor(capacity);
    if (buckets === table.length) return;
    table = new Int32Array(buckets);
    mask = buckets - 1;
    for (let slot = oldest; slot !== NONE; slot = newer[slot] as number) {
      let bucket = (hashA[slot] as number) & mask;
      while (table[bucket] !== 0) bucket = (bucket + 1) & mask;
      table[bucket] = slot + 1;
    }
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

  /** Forgets the key in `slot`, found in `bucket`. */
  function removeAt(slot: number, bucket: number): void {
    clearBucket(bucket);
    unlink(slot);
    newer[slot] = free;
    free = slot;
    count--;
  }

  /** Forgets the key in `slot` (its bucket found by probing from its hash's home). */
  function remove(slot: number): void {
    let bucket = (hashA[slot] as number) & mask;
    while (table[bucket] !== slot + 1) bucket = (bucket + 1) & mask;
    removeAt(slot, bucket);
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
      hash(key);
      const found = find();
      if (found >= 0) {
        const existing = (table[found] as number) - 1;
        if ((expiries[existing] as number) > time) {
          // Seen again: now the most recently used, with the same expiry.
          unlink(existing);
          append(existing);
          return false;
        }
        removeAt(existing, found);
      }
      // Forget expired keys from the least recently used end, up to the first live one; then make
      // room by forgetting the least recently used.
      while (oldest !== NONE && (expiries[oldest] as number) <= time) remove(oldest);
      if (count >= maxEntries) remove(oldest);
      const slot = takeSlot(); // may grow the table: look for the free bucket after it
      hashA[slot] = a;
      hashB[slot] = b;
      expiries[slot] = time + ttlMs;
      table[~find()] = slot + 1;
      append(slot);
      count++;
      return true;
    },
    release(key) {
      hash(key);
      const found = find();
      if (found >= 0) removeAt((table[found] as number) - 1, found);
    },
    get size() {
      return count;
    },
  };
}

/** MurmurHash3's finalizer: every bit of the result depends on every bit of `h`. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Buckets for `slots` keys: a power of two, at least twice as many (load factor at most 0.5). */
function bucketsFor(slots: number): number {
  let buckets = 2;
  while (buckets < slots * 2) buckets *= 2;
  return buckets;
}

function grown<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
