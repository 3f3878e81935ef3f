/**
 * The hand-written references of the durable-queue benchmarks (`pnpm bench redis`, `pnpm bench
 * postgres`): a route that does the job's minimum itself (verify, parse, then one atomic "dedupe
 * and enqueue" in the queue's own library) and answers as the receiver does.
 */
import { handVerifiedAlert, type HandAlert } from './hand-check.js';

export interface HandAnswer {
  status: number;
  body: Record<string, unknown>;
}

const ACCEPTED: HandAnswer = { status: 202, body: { received: true } };
const DUPLICATE: HandAnswer = { status: 202, body: { received: true, duplicate: true } };
const INVALID: HandAnswer = { status: 401, body: { error: { code: 'INVALID_SIGNATURE' } } };
const UNAVAILABLE: HandAnswer = { status: 503, body: { error: { code: 'OVERLOADED' } } };

/** The route's work after the framework has read the raw body: verify, then store. */
export type HandEnqueue = (
  body: unknown,
  signature: string | undefined,
  timestamp: string | undefined,
) => Promise<HandAnswer>;

/**
 * Stores a verified alert under its identity (`userId:triggeredAt`) with de-duplication, in one
 * atomic step of the queue's library: `'duplicate'` when the identity was already recorded.
 */
export type HandStore = (alert: HandAlert, id: string) => Promise<'accepted' | 'duplicate'>;

/** The route around `store`: 401 for a delivery that does not verify, 503 when `store` fails. */
export function handEnqueue(store: HandStore): HandEnqueue {
  return async (body, signature, timestamp) => {
    let alert: HandAlert | undefined;
    try {
      alert = handVerifiedAlert(body, signature, timestamp);
    } catch {
      alert = undefined; // JSON that does not parse
    }
    if (alert === undefined) return INVALID;
    const id = `${String(alert.userId)}:${String(alert.triggeredAt)}`;
    try {
      return (await store(alert, id)) === 'accepted' ? ACCEPTED : DUPLICATE;
    } catch {
      return UNAVAILABLE;
    }
  };
}
