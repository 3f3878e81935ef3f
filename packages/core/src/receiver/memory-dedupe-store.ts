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

/**
 * An in-memory LRU of alert identities, the receiver's default `DedupeStore`. It is per process:
 * several instances behind a load balancer need a shared store instead.
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
  // Map keeps insertion order: the first key is the least recently claimed or seen.
  const expiries = new Map<string, number>();

  function pruneExpired(time: number): void {
    for (const [key, expiresAt] of expiries) {
      if (expiresAt > time) break;
      expiries.delete(key);
    }
  }

  return {
    claim(key, ttlMs) {
      const time = now();
      const expiresAt = expiries.get(key);
      expiries.delete(key);
      if (expiresAt !== undefined && expiresAt > time) {
        expiries.set(key, expiresAt); // seen again: most recently used, same expiry
        return false;
      }
      expiries.set(key, time + ttlMs);
      pruneExpired(time);
      while (expiries.size > maxEntries) {
        const oldest = expiries.keys().next();
        if (oldest.done === true) break;
        expiries.delete(oldest.value);
      }
      return true;
    },
    release(key) {
      expiries.delete(key);
    },
    get size() {
      return expiries.size;
    },
  };
}
