import type { SandboxClock } from '../clock/clock.js';

/** A stored first answer. */
export interface StoredAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

type Slot =
  | { state: 'pending'; waiters: ((answer: StoredAnswer | undefined) => void)[] }
  | { state: 'done'; answer: StoredAnswer; at: number };

/** How long an answer is replayed: 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** First answers by key (`<apiKey> <Idempotency-Key>`). */
export interface IdempotencyStore {
  /**
   * Claims a key: `undefined` when this request is the first (it must then `complete` or `release`
   * the key), else the first answer (waiting for it when the first request is still running).
   */
  claim(key: string): Promise<StoredAnswer | undefined> | undefined;
  complete(key: string, answer: StoredAnswer): void;
  /** Forgets a key whose first request did not produce an answer worth replaying (5xx, aborted). */
  release(key: string): void;
}

/** Creates an in-memory store on the injected clock. */
export function createIdempotencyStore(
  clock: SandboxClock,
  ttlMs: number = IDEMPOTENCY_TTL_MS,
): IdempotencyStore {
  const slots = new Map<string, Slot>();
  const settle = (key: string, answer: StoredAnswer | undefined): void => {
    const slot = slots.get(key);
    if (slot?.state !== 'pending') return;
    if (answer) slots.set(key, { state: 'done', answer, at: clock.now() });
    else slots.delete(key);
    for (const wake of slot.waiters) wake(answer);
  };
  return {
    claim(key) {
      const slot = slots.get(key);
      if (slot?.state === 'done' && clock.now() - slot.at < ttlMs)
        return Promise.resolve(slot.answer);
      if (slot?.state === 'pending') return new Promise((resolve) => slot.waiters.push(resolve));
      slots.set(key, { state: 'pending', waiters: [] });
      return undefined;
    },
    complete: (key, answer) => {
      settle(key, answer);
    },
    release: (key) => {
      settle(key, undefined);
    },
  };
}
