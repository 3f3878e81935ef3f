import type { SandboxClock } from '../clock/clock.js';

/** A stored first answer. */
export interface StoredAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** What identifies the request a key was first used with. */
export interface RequestFingerprint {
  method: string;
  /** The path with its query string, as the request sent it. */
  path: string;
  /** A hash of the raw body (of the empty string when there is none). */
  bodyHash: string;
}

type Slot = { fingerprint: RequestFingerprint } & (
  | { state: 'pending'; waiters: ((answer: StoredAnswer | undefined) => void)[] }
  | { state: 'done'; answer: StoredAnswer; at: number }
);

/** The outcome of `claim`. */
export type Claim =
  /** This request is the first with the key: it must then `complete` or `release` the key. */
  | { kind: 'first' }
  /** The first answer (waiting for it while the first request runs); `undefined` if released. */
  | { kind: 'replay'; answer: Promise<StoredAnswer | undefined> }
  /** The key was first used with a different method, path or body: `first` tells which. */
  | { kind: 'reused'; first: RequestFingerprint };

/** How long an answer is replayed: 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** How many keys the store keeps at most; above it the oldest answers are forgotten. */
export const IDEMPOTENCY_MAX_ENTRIES = 10_000;

/** Options of `createIdempotencyStore`. */
export interface IdempotencyStoreOptions {
  /** How long an answer is replayed. Default `IDEMPOTENCY_TTL_MS`. */
  ttlMs?: number;
  /** How many keys are kept at most. Default `IDEMPOTENCY_MAX_ENTRIES`. */
  maxEntries?: number;
}

/** First answers by key (`<apiKey> <Idempotency-Key>`), each with the request that produced it. */
export interface IdempotencyStore {
  /** Claims a key for a request (see `Claim`). */
  claim(key: string, fingerprint: RequestFingerprint): Claim;
  complete(key: string, answer: StoredAnswer): void;
  /** Forgets a key whose first request did not produce an answer worth replaying (5xx, aborted). */
  release(key: string): void;
  /** How many keys are held (pending or answered). */
  size(): number;
}

const sameRequest = (a: RequestFingerprint, b: RequestFingerprint): boolean =>
  a.method === b.method && a.path === b.path && a.bodyHash === b.bodyHash;

/**
 * Creates an in-memory store on the injected clock. Answered keys are kept in the order they were
 * answered; every new claim first drops the expired ones from the front, then, above `maxEntries`,
 * the oldest answered ones. Keys whose first request is still running are never dropped.
 */
export function createIdempotencyStore(
  clock: SandboxClock,
  options: IdempotencyStoreOptions = {},
): IdempotencyStore {
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const maxEntries = options.maxEntries ?? IDEMPOTENCY_MAX_ENTRIES;
  const slots = new Map<string, Slot>();

  const expired = (slot: Slot): boolean => slot.state === 'done' && clock.now() - slot.at >= ttlMs;

  /** Drops expired answers (oldest first), then the oldest answers while more than `limit` are held. */
  const prune = (limit: number): void => {
    let excess = slots.size - limit;
    for (const [key, slot] of slots) {
      if (slot.state === 'pending') continue;
      if (!expired(slot) && excess <= 0) break;
      slots.delete(key);
      excess -= 1;
    }
  };

  const settle = (key: string, answer: StoredAnswer | undefined): void => {
    const slot = slots.get(key);
    if (slot?.state !== 'pending') return;
    // Deleted and set again, so that answered keys stay in the order they were answered.
    slots.delete(key);
    if (answer)
      slots.set(key, { state: 'done', fingerprint: slot.fingerprint, answer, at: clock.now() });
    for (const wake of slot.waiters) wake(answer);
  };

  return {
    claim(key, fingerprint) {
      const slot = slots.get(key);
      if (slot && !expired(slot)) {
        if (!sameRequest(slot.fingerprint, fingerprint))
          return { kind: 'reused', first: slot.fingerprint };
        if (slot.state === 'done') return { kind: 'replay', answer: Promise.resolve(slot.answer) };
        return { kind: 'replay', answer: new Promise((resolve) => slot.waiters.push(resolve)) };
      }
      slots.delete(key);
      prune(maxEntries - 1);
      slots.set(key, { state: 'pending', fingerprint, waiters: [] });
      return { kind: 'first' };
    },
    complete: (key, answer) => {
      settle(key, answer);
    },
    release: (key) => {
      settle(key, undefined);
    },
    size: () => slots.size,
  };
}
